import type { z } from 'zod';
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { entityViewSchema, movementViewSchema } from '../../schemas/responses.ts';
import type { StoredNormalization } from '../../schemas/families/stored.ts';

export type EntityView = z.infer<typeof entityViewSchema>;
export type MovementView = z.infer<typeof movementViewSchema>;

// Canonical views: the current data with identifying values only as keyed hashes, plus where the
// version came from. Field names beyond the spec's notes are ours (docs/decisions/0006).

export interface EntityRow {
  object: EntityView['object'];
  external_id: string;
  sequence: bigint | null;
  event_id: string;
  occurred_at: Date;
  received_at: Date;
  data: Record<string, unknown>;
  version_count: number;
}

export function entityView(row: EntityRow): EntityView {
  return {
    object: row.object,
    external_id: row.external_id,
    ...row.data,
    sequence: row.sequence === null ? null : Number(row.sequence),
    event_id: ID_PREFIXES.event + row.event_id,
    occurred_at: row.occurred_at.toISOString(),
    received_at: row.received_at.toISOString(),
    version_count: row.version_count,
  };
}

export interface MovementRow {
  external_id: string;
  event_id: string;
  occurred_at: Date;
  received_at: Date;
  debit_party_id: string | null;
  credit_party_id: string | null;
  normalized: StoredNormalization | null;
  data: Record<string, unknown>;
  linked_from: Array<{ relation: string; external_id: string }> | null;
  cursor_at?: string;
}

export function movementView(row: MovementRow): MovementView {
  const normalized = row.normalized;
  return {
    object: 'movement' as const,
    external_id: row.external_id,
    ...row.data,
    // The parties on each side: the party a leg names, else its account's holder.
    parties: { debit: row.debit_party_id, credit: row.credit_party_id },
    normalized_amount: normalized?.status === 'normalized' ? { ...normalized.amount, fx: normalized.fx } : null,
    normalization:
      normalized === null
        ? { status: 'not_needed' }
        : normalized.status === 'normalized'
          ? { status: 'normalized' }
          : { status: 'unavailable', reason: normalized.reason, pair: normalized.pair, at: normalized.at },
    linked_from: row.linked_from ?? [],
    event_id: ID_PREFIXES.event + row.event_id,
    occurred_at: row.occurred_at.toISOString(),
    received_at: row.received_at.toISOString(),
  };
}

// Selects a MovementRow from canonical_movements m (with the movements that point at it).
export const MOVEMENT_COLUMNS = `m.external_id, m.event_id, m.occurred_at, m.received_at, m.debit_party_id, m.credit_party_id,
  m.normalized, m.data,
  (SELECT jsonb_agg(jsonb_build_object('relation', l.relation, 'external_id', l.from_id) ORDER BY l.from_id, l.relation)
     FROM canonical_movement_links l WHERE l.tenant_id = m.tenant_id AND l.to_id = m.external_id) AS linked_from`;
