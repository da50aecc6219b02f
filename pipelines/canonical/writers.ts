import type { PoolClient } from '../../platform/postgres/pool.ts';

type Db = Pick<PoolClient, 'query'>;

// The canonical model's entities, written per batch (facts: commit-batch.ts). Every write is
// keyed by the event, so a redelivered batch changes nothing.

export interface EventMeta {
  tenantId: string;
  eventId: string;
  object: string;
  externalId: string;
  sequence: number | null;
  occurredAt: string;
  receivedAt: string;
  historical: boolean;
}

export interface EntityWrite {
  meta: EventMeta;
  data: Record<string, unknown>;
}

// Every version is kept; the current one is the highest sequence, so a late lower sequence
// lands in history and never becomes current. One statement from one JSON document: the versions,
// then one candidate per entity (the highest sequence in this batch, the first in log order among
// equals: an upsert cannot touch a row twice). Returns the event ids that became current.
export async function writeEntities(db: Db, writes: EntityWrite[]): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  const best = new Map<string, EntityWrite>();
  for (const write of writes) {
    const id = `${write.meta.tenantId}\u0000${write.meta.object}\u0000${write.meta.externalId}`;
    const current = best.get(id);
    if (!current || (write.meta.sequence ?? -1) > (current.meta.sequence ?? -1)) best.set(id, write);
  }
  const candidates = new Set(best.values());
  const document = JSON.stringify(
    writes.map((w) => ({
      tenant_id: w.meta.tenantId,
      object: w.meta.object,
      external_id: w.meta.externalId,
      sequence: w.meta.sequence,
      event_id: w.meta.eventId,
      occurred_at: w.meta.occurredAt,
      received_at: w.meta.receivedAt,
      candidate: candidates.has(w),
      data: w.data,
    })),
  );
  const { rows } = await db.query<{ event_id: string }>({
    name: 'entity-writes',
    text: `WITH u AS MATERIALIZED (
             SELECT * FROM jsonb_to_recordset($1::jsonb) AS u(tenant_id text, object text, external_id text, sequence bigint,
                    event_id uuid, occurred_at timestamptz, received_at timestamptz, candidate boolean, data jsonb)
           ),
           versions AS (
             INSERT INTO canonical_entity_versions (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
             SELECT tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data FROM u
             ON CONFLICT (tenant_id, event_id) DO NOTHING
           )
           INSERT INTO canonical_entities (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
           SELECT tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data FROM u WHERE candidate
           ON CONFLICT (tenant_id, object, external_id) DO UPDATE
             SET sequence = EXCLUDED.sequence, event_id = EXCLUDED.event_id, occurred_at = EXCLUDED.occurred_at,
                 received_at = EXCLUDED.received_at, data = EXCLUDED.data
           WHERE coalesce(EXCLUDED.sequence, -1) > coalesce(canonical_entities.sequence, -1)
           RETURNING event_id`,
    values: [document],
  });
  return new Set(rows.map((r) => r.event_id));
}
