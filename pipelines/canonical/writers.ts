import type { PoolClient } from '../../platform/postgres/pool.ts';
import type { Normalization } from './fx.ts';

type Db = Pick<PoolClient, 'query'>;

// Set-based writes of the canonical model: one statement per table per batch. Every write is
// keyed by the event (or the fact's external id), so a redelivered batch changes nothing.

export interface EventMeta {
  tenantId: string;
  eventId: string;
  object: string;
  externalId: string;
  sequence: number | null;
  occurredAt: string;
  receivedAt: string;
}

export interface EntityWrite {
  meta: EventMeta;
  data: Record<string, unknown>;
}

// Every version is kept; the current one is the highest sequence, so a late lower sequence
// lands in history and never becomes current. Returns the event ids that became current.
export async function writeEntities(db: Db, writes: EntityWrite[]): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  // One JSON document per statement (see writeMovements).
  const columns = (rows: EntityWrite[]) => [
    JSON.stringify(
      rows.map((w) => ({
        tenant_id: w.meta.tenantId,
        object: w.meta.object,
        external_id: w.meta.externalId,
        sequence: w.meta.sequence,
        event_id: w.meta.eventId,
        occurred_at: w.meta.occurredAt,
        received_at: w.meta.receivedAt,
        data: w.data,
      })),
    ),
  ];
  const source = `jsonb_to_recordset($1::jsonb) AS u(tenant_id text, object text, external_id text, sequence bigint, event_id uuid,
                  occurred_at timestamptz, received_at timestamptz, data jsonb)`;
  await db.query({
    name: 'entity-versions',
    text: `INSERT INTO canonical_entity_versions (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
           SELECT tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data FROM ${source}
           ON CONFLICT (tenant_id, event_id) DO NOTHING`,
    values: columns(writes),
  });
  // One candidate per entity: the highest sequence in this batch (an upsert cannot touch a row twice).
  const best = new Map<string, EntityWrite>();
  for (const write of writes) {
    const id = `${write.meta.tenantId}\u0000${write.meta.object}\u0000${write.meta.externalId}`;
    const current = best.get(id);
    if (!current || (write.meta.sequence ?? -1) > (current.meta.sequence ?? -1)) best.set(id, write);
  }
  const { rows } = await db.query<{ event_id: string }>({
    name: 'entity-current',
    text: `INSERT INTO canonical_entities (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
           SELECT tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data FROM ${source}
           ON CONFLICT (tenant_id, object, external_id) DO UPDATE
             SET sequence = EXCLUDED.sequence, event_id = EXCLUDED.event_id, occurred_at = EXCLUDED.occurred_at,
                 received_at = EXCLUDED.received_at, data = EXCLUDED.data
           WHERE coalesce(EXCLUDED.sequence, -1) > coalesce(canonical_entities.sequence, -1)
           RETURNING event_id`,
    values: columns([...best.values()]),
  });
  return new Set(rows.map((r) => r.event_id));
}

export interface MovementWrite {
  meta: EventMeta;
  type: string;
  status: string;
  amount: { value: string; asset: string; scale: number };
  debitAccountId: string | null;
  debitPartyId: string | null;
  creditAccountId: string | null;
  creditPartyId: string | null;
  normalized: Normalization | undefined;
  links: Record<string, string>;
  data: Record<string, unknown>;
}

// Facts are immutable: written once. Corrections, reversals and refunds are new movements whose
// links name the original.
export async function writeMovements(db: Db, writes: MovementWrite[]): Promise<void> {
  if (writes.length === 0) return;
  // One JSON document for the whole batch: PostgreSQL parses it in C, where sixteen array
  // parameters would each need escaping element by element.
  const rows = writes.map((w) => ({
    tenant_id: w.meta.tenantId,
    external_id: w.meta.externalId,
    event_id: w.meta.eventId,
    occurred_at: w.meta.occurredAt,
    received_at: w.meta.receivedAt,
    type: w.type,
    status: w.status,
    amount_value: w.amount.value,
    amount_asset: w.amount.asset,
    amount_scale: w.amount.scale,
    debit_account_id: w.debitAccountId,
    debit_party_id: w.debitPartyId,
    credit_account_id: w.creditAccountId,
    credit_party_id: w.creditPartyId,
    normalized: w.normalized ?? null,
    data: w.data,
  }));
  await db.query({
    name: 'movements',
    text: `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status,
             amount_value, amount_asset, amount_scale, debit_account_id, debit_party_id, credit_account_id, credit_party_id,
             normalized, data)
           SELECT tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset,
                  amount_scale, debit_account_id, debit_party_id, credit_account_id, credit_party_id, normalized, data
             FROM jsonb_to_recordset($1::jsonb) AS r(tenant_id text, external_id text, event_id uuid, occurred_at timestamptz,
                  received_at timestamptz, type text, status text, amount_value numeric, amount_asset text, amount_scale smallint,
                  debit_account_id text, debit_party_id text, credit_account_id text, credit_party_id text, normalized jsonb, data jsonb)
           ON CONFLICT (tenant_id, external_id) DO NOTHING`,
    values: [JSON.stringify(rows)],
  });
  const links = writes.flatMap((w) => Object.entries(w.links).map(([relation, to]) => ({ tenantId: w.meta.tenantId, from: w.meta.externalId, relation, to })));
  if (links.length > 0) {
    await db.query(
      `INSERT INTO canonical_movement_links (tenant_id, from_id, relation, to_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [links.map((l) => l.tenantId), links.map((l) => l.from), links.map((l) => l.relation), links.map((l) => l.to)],
    );
  }
}

export interface ControlEventWrite {
  meta: EventMeta;
  type: string;
  subject: { kind: string; external_id: string };
  data: Record<string, unknown>;
}

export async function writeControlEvents(db: Db, writes: ControlEventWrite[]): Promise<void> {
  if (writes.length === 0) return;
  await db.query({
    name: 'control-events',
    text: `INSERT INTO canonical_control_events (tenant_id, external_id, event_id, occurred_at, received_at, type,
             subject_kind, subject_external_id, data)
           SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::timestamptz[], $5::timestamptz[], $6::text[],
                                $7::text[], $8::text[], $9::jsonb[])
           ON CONFLICT (tenant_id, external_id) DO NOTHING`,
    values: [
      writes.map((w) => w.meta.tenantId),
      writes.map((w) => w.meta.externalId),
      writes.map((w) => w.meta.eventId),
      writes.map((w) => w.meta.occurredAt),
      writes.map((w) => w.meta.receivedAt),
      writes.map((w) => w.type),
      writes.map((w) => w.subject.kind),
      writes.map((w) => w.subject.external_id),
      writes.map((w) => JSON.stringify(w.data)),
    ],
  });
}
