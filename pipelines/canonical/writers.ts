import type { PoolClient } from '../../platform/postgres/pool.ts';
import type { Family } from '../../schemas/families/index.ts';
import type { Normalization } from './fx.ts';

type Db = Pick<PoolClient, 'query'>;

export interface EventMeta {
  tenantId: string;
  eventId: string;
  externalId: string;
  sequence: number | null;
  occurredAt: string;
  receivedAt: string;
}

// Every version is kept; the current one is the highest sequence, so a late lower sequence
// lands in history and never becomes current.
export async function writeEntity(db: Db, object: Family, meta: EventMeta, data: Record<string, unknown>): Promise<void> {
  const values = [meta.tenantId, object, meta.externalId, meta.sequence, meta.eventId, meta.occurredAt, meta.receivedAt, data];
  await db.query({
    name: 'entity-version',
    text: `INSERT INTO canonical_entity_versions (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, event_id) DO NOTHING`,
    values,
  });
  await db.query({
    name: 'entity-current',
    text: `INSERT INTO canonical_entities (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (tenant_id, object, external_id) DO UPDATE
             SET sequence = EXCLUDED.sequence, event_id = EXCLUDED.event_id, occurred_at = EXCLUDED.occurred_at,
                 received_at = EXCLUDED.received_at, data = EXCLUDED.data
           WHERE coalesce(EXCLUDED.sequence, -1) > coalesce(canonical_entities.sequence, -1)`,
    values,
  });
}

export interface MovementRow {
  type: string;
  status: string;
  amount: { value: string; asset: string; scale: number };
  debitAccountId: string | null;
  debitPartyId: string | null;
  creditAccountId: string | null;
  creditPartyId: string | null;
  normalized: Normalization | undefined;
  links: Record<string, string>;
}

// Facts are immutable: written once; a redelivery changes nothing. Corrections, reversals and
// refunds are new movements whose links name the original.
export async function writeMovement(db: Db, meta: EventMeta, row: MovementRow, data: Record<string, unknown>): Promise<void> {
  await db.query({
    name: 'movement',
    text: `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status,
             amount_value, amount_asset, amount_scale, debit_account_id, debit_party_id, credit_account_id, credit_party_id,
             normalized, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
           ON CONFLICT (tenant_id, external_id) DO NOTHING`,
    values: [
      meta.tenantId, meta.externalId, meta.eventId, meta.occurredAt, meta.receivedAt, row.type, row.status,
      row.amount.value, row.amount.asset, row.amount.scale, row.debitAccountId, row.debitPartyId, row.creditAccountId,
      row.creditPartyId, row.normalized ?? null, data,
    ],
  });
  const relations = Object.entries(row.links);
  if (relations.length > 0) {
    await db.query(
      `INSERT INTO canonical_movement_links (tenant_id, from_id, relation, to_id)
       SELECT $1, $2, * FROM unnest($3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [meta.tenantId, meta.externalId, relations.map(([relation]) => relation), relations.map(([, to]) => to)],
    );
  }
}

export async function writeControlEvent(
  db: Db,
  meta: EventMeta,
  row: { type: string; subject: { kind: string; external_id: string } },
  data: Record<string, unknown>,
): Promise<void> {
  await db.query({
    name: 'control-event',
    text: `INSERT INTO canonical_control_events (tenant_id, external_id, event_id, occurred_at, received_at, type,
             subject_kind, subject_external_id, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (tenant_id, external_id) DO NOTHING`,
    values: [meta.tenantId, meta.externalId, meta.eventId, meta.occurredAt, meta.receivedAt, row.type, row.subject.kind, row.subject.external_id, data],
  });
}
