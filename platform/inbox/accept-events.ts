import type { Family } from '../../schemas/families/index.ts';
import type { Pool, PoolClient } from '../postgres/pool.ts';

// One validated event ready to be committed: the inbox row's content.
export interface PreparedEvent {
  tenantId: string;
  eventId: string;
  object: Family;
  externalId: string;
  // null for facts, and for an entity sent without one.
  sequence: number | null;
  rawEvent: Buffer;
  contentHash: Buffer;
  // The instant of occurred_at (the text as sent stays in rawEvent).
  occurredAt: Date;
  receivedAt: Date;
  correlationId: string | null;
  importId: string | null;
  historical: boolean;
}

export type AcceptOutcome =
  // A new inbox row, its outbox row and its `received` stage row were committed together.
  | { kind: 'accepted'; eventId: string; receivedAt: Date }
  // The same canonical content was already accepted under this dedup key: the original event.
  | { kind: 'duplicate'; eventId: string; receivedAt: Date }
  // The dedup key is taken by different content; nothing was written.
  | { kind: 'conflict' };

type Queryable = Pick<Pool | PoolClient, 'query'>;

const RECEIVED_WORKER = `api:${process.pid}`;

// Writes the inbox, outbox and stage rows of every new event in ONE statement, so they commit
// together (on a pool: its own transaction; on a client inside BEGIN: the caller's). Rows are
// inserted in dedup-key order so concurrent writers take index locks in the same order and cannot
// deadlock. Events whose dedup key already exists are then resolved against the stored hash.
export async function acceptEvents(db: Queryable, events: PreparedEvent[]): Promise<AcceptOutcome[]> {
  if (events.length === 0) return [];
  const order = events.map((_, i) => i).sort((a, b) => compareDedupKey(events[a]!, events[b]!));
  const rows = order.map((i) => events[i]!);
  const bytes = packed(rows);
  const inserted = await db.query<{ event_id: string }>({
    name: 'accept-events',
    text: `WITH incoming AS (
       SELECT u.tenant_id, u.event_id, u.object, u.external_id, u.sequence,
              substring($6::bytea FROM u.raw_at FOR u.raw_length) AS raw_event,
              substring($7::bytea FROM (u.n::int - 1) * 32 + 1 FOR 32) AS content_hash,
              u.received_at, u.occurred_at, u.correlation_id, u.import_id, u.historical
         FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $14::int[], $15::int[],
                     $8::timestamptz[], $9::timestamptz[], $10::text[], $11::uuid[], $12::boolean[])
                WITH ORDINALITY AS u(tenant_id, event_id, object, external_id, sequence, raw_at, raw_length,
                                     received_at, occurred_at, correlation_id, import_id, historical, n)
     ),
     inbox AS (
       INSERT INTO inbox_events (tenant_id, event_id, object, external_id, sequence, raw_event, content_hash,
                                 received_at, occurred_at, correlation_id, import_id, historical)
       SELECT * FROM incoming
       ON CONFLICT ON CONSTRAINT inbox_events_dedup DO NOTHING
       RETURNING tenant_id, event_id, object, external_id, received_at
     ),
     obligation AS (
       INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at)
       SELECT tenant_id, event_id, 'inbox.' || object, tenant_id || '/' || object || '/' || external_id, received_at FROM inbox
     ),
     stage AS (
       INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker)
       SELECT tenant_id, event_id, 'received', 'ok', received_at, $13 FROM inbox
     )
     SELECT event_id FROM inbox`,
    values: [
      rows.map((e) => e.tenantId),
      rows.map((e) => e.eventId),
      rows.map((e) => e.object),
      rows.map((e) => e.externalId),
      rows.map((e) => e.sequence),
      bytes.raw,
      bytes.hashes,
      rows.map((e) => e.receivedAt),
      // PostgreSQL is handed the instant, not the text as sent (its offsets stop at ±15:59).
      rows.map((e) => e.occurredAt.toISOString()),
      rows.map((e) => e.correlationId),
      rows.map((e) => e.importId),
      rows.map((e) => e.historical),
      RECEIVED_WORKER,
      bytes.rawAt,
      bytes.rawLength,
    ],
  });
  const won = new Set(inserted.rows.map((r) => r.event_id));
  const outcomes: AcceptOutcome[] = events.map((e) =>
    won.has(e.eventId) ? { kind: 'accepted', eventId: e.eventId, receivedAt: e.receivedAt } : { kind: 'conflict' },
  );
  const losers = events.map((e, i) => ({ e, i })).filter(({ e }) => !won.has(e.eventId));
  if (losers.length > 0) await resolveExisting(db, losers, outcomes);
  return outcomes;
}

// The events' raw bytes and hashes travel as two bytea parameters, every event's bytes end to end,
// cut apart by offset in the statement: a Buffer parameter is sent as it is (binary), where an
// array of them is sent as hex text, twice the size, built by the client and parsed by the server.
function packed(events: PreparedEvent[]): { raw: Buffer; rawAt: number[]; rawLength: number[]; hashes: Buffer } {
  const rawAt: number[] = new Array(events.length);
  const rawLength: number[] = new Array(events.length);
  let at = 1;
  events.forEach((event, i) => {
    // Cut apart by position: a hash of another length would shift every one after it.
    if (event.contentHash.length !== 32) throw new Error('a content hash is a SHA-256 digest of 32 bytes');
    rawAt[i] = at;
    rawLength[i] = event.rawEvent.length;
    at += event.rawEvent.length;
  });
  return {
    raw: Buffer.concat(events.map((e) => e.rawEvent), at - 1),
    rawAt,
    rawLength,
    hashes: Buffer.concat(events.map((e) => e.contentHash), 32 * events.length),
  };
}

async function resolveExisting(
  db: Queryable,
  losers: Array<{ e: PreparedEvent; i: number }>,
  outcomes: AcceptOutcome[],
): Promise<void> {
  // Looked up by the index prefix (tenant, object, external_id); the sequence is matched here,
  // where NULL equals NULL.
  const { rows } = await db.query<{
    tenant_id: string;
    object: string;
    external_id: string;
    sequence: bigint | null;
    event_id: string;
    content_hash: Buffer;
    received_at: Date;
  }>(
    `SELECT i.tenant_id, i.object, i.external_id, i.sequence, i.event_id, i.content_hash, i.received_at
       FROM inbox_events i
       JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[]) AS u(tenant_id, object, external_id)) u
         ON i.tenant_id = u.tenant_id AND i.object = u.object AND i.external_id = u.external_id`,
    [losers.map(({ e }) => e.tenantId), losers.map(({ e }) => e.object), losers.map(({ e }) => e.externalId)],
  );
  for (const { e, i } of losers) {
    const existing = rows.find(
      (r) =>
        r.tenant_id === e.tenantId &&
        r.object === e.object &&
        r.external_id === e.externalId &&
        (r.sequence === null ? e.sequence === null : e.sequence !== null && r.sequence === BigInt(e.sequence)),
    );
    if (!existing) throw new Error('inbox dedup conflict without a stored row');
    outcomes[i] = existing.content_hash.equals(e.contentHash)
      ? { kind: 'duplicate', eventId: existing.event_id, receivedAt: existing.received_at }
      : { kind: 'conflict' };
  }
}

function compareDedupKey(a: PreparedEvent, b: PreparedEvent): number {
  return (
    cmp(a.tenantId, b.tenantId) ||
    cmp(a.object, b.object) ||
    cmp(a.externalId, b.externalId) ||
    (a.sequence ?? -1) - (b.sequence ?? -1)
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
