import type { PoolClient } from '../postgres/pool.ts';
import type { EventKey } from './event-stages.ts';

// What the Kafka relay could not carry, on the events themselves (GET /v1/events/{id}): a row the
// Avro mapping refuses goes to <ns>dlq.relay, and no pipeline will ever see it.
//
// - An accepted event (the inbox stream) never reaches the canonical pipeline: it is rejected
//   (terminal, with the reason), and its history gains a `relay` entry `rejected`. Only from
//   `pending`: a held event is already the canonical pipeline's, which re-reads it from the inbox.
// - A change record (the canonical stream) names an event the canonical pipeline processed: its
//   status stays, and a `relay` entry `failed` says the later pipelines will not see it.
//
// Written once per event however often its row is dead-lettered again (a batch resent after a
// crash, a relay of another namespace): the status change and the entries are conditional.

export const RELAY_STAGE = 'relay';
const REFUSAL_CODE = 'relay_encoding_failed';

export interface RelayRefusal {
  key: EventKey;
  stream: 'inbox' | 'canonical';
  // The bus topic the row was meant for, and why its value could not be encoded.
  topic: string;
  error: string;
}

export async function recordRelayRefusals(
  db: Pick<PoolClient, 'query'>,
  refusals: readonly RelayRefusal[],
  entry: { at: Date; worker: string; deadLetterTopic: string },
): Promise<void> {
  const reasonOf = (r: RelayRefusal) => JSON.stringify({ code: REFUSAL_CODE, message: r.error, topic: r.topic, dead_letter_topic: entry.deadLetterTopic });
  // In key order, as the canonical pipeline locks inbox rows: relays of several namespaces never
  // wait on each other's rows in opposite orders.
  const sorted = [...refusals].sort((a, b) => compare(a.key.tenantId, b.key.tenantId) || compare(a.key.eventId, b.key.eventId));
  const accepted = sorted.filter((r) => r.stream === 'inbox');
  const changes = sorted.filter((r) => r.stream === 'canonical');
  if (accepted.length > 0) {
    await db.query({
      name: 'relay-refuse-accepted',
      text: `WITH refused AS (
               UPDATE inbox_events i SET status = 'rejected', rejection = u.reason, terminal_at = $4, attempts = attempts + 1
                 FROM unnest($1::text[], $2::uuid[], $3::jsonb[]) AS u(t, e, reason)
                WHERE i.tenant_id = u.t AND i.event_id = u.e AND i.status = 'pending'
               RETURNING i.tenant_id, i.event_id, u.reason
             )
             INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
             SELECT tenant_id, event_id, '${RELAY_STAGE}', 'rejected', $4, $5, NULL, reason FROM refused`,
      values: [accepted.map((r) => r.key.tenantId), accepted.map((r) => r.key.eventId), accepted.map(reasonOf), entry.at, entry.worker],
    });
  }
  if (changes.length > 0) {
    await db.query({
      name: 'relay-refuse-changes',
      text: `INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
             SELECT DISTINCT ON (u.t, u.e) u.t, u.e, '${RELAY_STAGE}', 'failed', $4, $5, NULL, u.reason
               FROM unnest($1::text[], $2::uuid[], $3::jsonb[]) AS u(t, e, reason)
              WHERE EXISTS (SELECT 1 FROM inbox_events i WHERE i.tenant_id = u.t AND i.event_id = u.e)
                AND NOT EXISTS (SELECT 1 FROM event_stages s WHERE s.tenant_id = u.t AND s.event_id = u.e AND s.stage = '${RELAY_STAGE}' AND s.status = 'failed')`,
      values: [changes.map((r) => r.key.tenantId), changes.map((r) => r.key.eventId), changes.map(reasonOf), entry.at, entry.worker],
    });
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
