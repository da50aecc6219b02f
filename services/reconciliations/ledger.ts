// The movements a declaration's definition holds, with ledger semantics, as one SQL relation:
// - a correction (links.correction_of, not failed) supersedes the movement it corrects, which is
//   no longer an entry anywhere;
// - a completed reversal (links.reverses) takes back what it reverses: it is attributed to the
//   reversed movement's legs, against its sign, and when both fall in the same definition a
//   reversal of the whole amount cancels the pair (neither is counted), while a partial one nets;
// - the period bounds event time (occurred_at) or recorded time (received_at), per the basis.
// Every statement reads one tenant and one asset through an index on its period column.

export interface Definition {
  tenantId: string;
  subjectKind: 'tenant' | 'account' | 'party';
  subjectId: string | null;
  direction: 'in' | 'out' | 'both';
  asset: string;
  from: Date;
  fromInclusive: boolean;
  to: Date;
  toInclusive: boolean;
  basis: 'occurred' | 'recorded';
  countedStatuses: string[];
  types: string[] | null;
  rails: string[] | null;
  counterparty: string | null;
  importId: string | null;
}

// Parameters $1..$9 of `entriesSql`, in order (a caller's own parameters follow).
export function entryParams(def: Definition): unknown[] {
  return [def.tenantId, def.asset, def.from, def.to, def.subjectId, def.types, def.rails, def.counterparty, def.importId];
}

export function timeColumn(def: Definition, alias: string): string {
  return `${alias}.${def.basis === 'recorded' ? 'received_at' : 'occurred_at'}`;
}

export function periodSql(column: string, def: Definition, from = '$3', to = '$4'): string {
  return `${column} ${def.fromInclusive ? '>=' : '>'} ${from} AND ${column} ${def.toInclusive ? '<=' : '<'} ${to}`;
}

// The scope's side(s) of an entry, over its attributed legs.
function sidesSql(def: Definition): string {
  // (The parameter is named even when unused, so it always has a type.)
  if (def.subjectKind === 'tenant') return `$5::text IS NULL`;
  const col = def.subjectKind === 'party' ? 'party' : 'account';
  if (def.direction === 'in') return `e.credit_${col} = $5`;
  if (def.direction === 'out') return `e.debit_${col} = $5`;
  return `(e.debit_${col} = $5 OR e.credit_${col} = $5)`;
}

// The other side of an entry names the counterparty (either side for a tenant scope).
function counterpartySql(def: Definition): string {
  const side = (s: 'debit' | 'credit') =>
    `(e.${s}_account = $8 OR e.${s}_party = $8 OR e.legs->'${s}'->'counterparty'->>'institution' = $8)`;
  if (def.subjectKind === 'tenant') return `($8::text IS NULL OR ${side('debit')} OR ${side('credit')})`;
  const col = def.subjectKind === 'party' ? 'party' : 'account';
  const viaDebit = def.direction === 'in' ? 'false' : `(e.debit_${col} = $5 AND ${side('credit')})`;
  const viaCredit = def.direction === 'out' ? 'false' : `(e.credit_${col} = $5 AND ${side('debit')})`;
  return `($8::text IS NULL OR ${viaDebit} OR ${viaCredit})`;
}

// The movement rows of the definition, as `m`: tenant, asset, period on its basis, type, rail and
// import (the legs are judged on the entries, after a reversal takes its original's).
export function definitionRowsSql(def: Definition): string {
  return `m.tenant_id = $1 AND m.amount_asset = $2 AND ${periodSql(timeColumn(def, 'm'), def)}
         AND ($6::text[] IS NULL OR m.type = ANY ($6::text[]))
         AND ($7::text[] IS NULL OR m.data->>'rail' = ANY ($7::text[]))
         AND ($9::uuid IS NULL OR EXISTS (SELECT 1 FROM inbox_events i WHERE i.tenant_id = m.tenant_id AND i.event_id = m.event_id AND i.import_id = $9::uuid))`;
}

// Entries of the definition (every status), each with `sign` (+1; -1 for a reversal sent with the
// sign of what it reverses, so that it always counts against it),
// `superseded` (a correction replaced it) and `cancelled` (both halves of a reversal pair inside
// the definition). Only entries neither superseded nor cancelled count. Columns: external_id,
// event_id, occurred_at, received_at, status, type, amount_value, base_value (null when no rate),
// base_scale, sign, reverses, superseded, corrected_by, reversed_by, cancelled.
// `narrow` evaluates the same rules over part of the definition (movement-items.ts): `ctes` come
// before `raw`, one of them (`ids`, a column `id`) names the movements that part needs, each then
// read by primary key rather than the period by its index.
export function entriesSql(def: Definition, narrow?: { ctes: string; ids: string }): string {
  return `
    WITH ${narrow ? `${narrow.ctes},` : ''} raw AS (
      SELECT m.external_id, m.event_id, m.occurred_at, m.received_at, m.status, m.type, m.amount_value,
             CASE WHEN m.amount_asset = t.base_asset THEN m.amount_value ELSE (m.normalized->'amount'->>'value')::numeric END AS base_value,
             CASE WHEN m.amount_asset = t.base_asset THEN m.amount_scale ELSE (m.normalized->'amount'->>'scale')::int END AS base_scale,
             -- A reversal takes back what it reverses whichever sign it was sent with (the spec
             -- allows a negative amount on a reversal leg): it counts against the original's sign.
             CASE WHEN o.external_id IS NULL OR (m.amount_value < 0) <> (o.amount_value < 0) THEN 1 ELSE -1 END AS sign,
             o.external_id AS reverses,
             coalesce(o.debit_account_id, CASE WHEN o.external_id IS NULL THEN m.debit_account_id END) AS debit_account,
             coalesce(o.debit_party_id, CASE WHEN o.external_id IS NULL THEN m.debit_party_id END) AS debit_party,
             coalesce(o.credit_account_id, CASE WHEN o.external_id IS NULL THEN m.credit_account_id END) AS credit_account,
             coalesce(o.credit_party_id, CASE WHEN o.external_id IS NULL THEN m.credit_party_id END) AS credit_party,
             CASE WHEN o.external_id IS NULL THEN m.data ELSE o.data END AS legs
        FROM ${narrow ? `${narrow.ids} n CROSS JOIN LATERAL (SELECT * FROM canonical_movements m WHERE m.tenant_id = $1 AND m.external_id = n.id OFFSET 0) m` : 'canonical_movements m'}
        JOIN tenants t ON t.tenant_id = m.tenant_id
        -- Probed by primary key, and only for a completed movement that names what it reverses.
        LEFT JOIN LATERAL (
          SELECT o.* FROM canonical_movements o
           WHERE m.status = 'completed' AND m.data->'links'->>'reverses' IS NOT NULL
             AND o.tenant_id = m.tenant_id AND o.external_id = m.data->'links'->>'reverses' AND o.amount_asset = m.amount_asset
          OFFSET 0 -- kept a per-row probe: a hash join would read every movement of the tenant
        ) o ON true
       WHERE ${definitionRowsSql(def)}
    ),
    scoped AS (
      SELECT e.*, c.corrected_by, c.corrected_by IS NOT NULL AS superseded
        FROM raw e
        LEFT JOIN LATERAL (
          SELECT min(l.from_id) AS corrected_by FROM canonical_movement_links l
           WHERE l.tenant_id = $1 AND l.to_id = e.external_id AND l.relation = 'correction_of'
             AND EXISTS (SELECT 1 FROM canonical_movements c WHERE c.tenant_id = $1 AND c.external_id = l.from_id AND c.status <> 'failed')
        ) c ON true
       WHERE ${sidesSql(def)} AND ${counterpartySql(def)}
    ),
    -- Reversal pairs inside the definition, by hash joins: an original and the first reversal of
    -- the same magnitude cancel; a partial reversal, or a second one, nets as a negative entry.
    reversers AS (
      SELECT s.reverses, min(s.external_id) AS reversed_by
        FROM scoped s JOIN scoped o ON o.external_id = s.reverses AND NOT o.superseded
       WHERE NOT s.superseded AND s.reverses IS NOT NULL AND abs(s.amount_value) = abs(o.amount_value)
       GROUP BY s.reverses
    ),
    entries AS (
      SELECT s.*, r.reversed_by,
             (NOT s.superseded AND (r.reversed_by IS NOT NULL OR p.reverses IS NOT NULL)) AS cancelled
        FROM scoped s
        LEFT JOIN reversers r ON r.reverses = s.external_id
        LEFT JOIN reversers p ON p.reversed_by = s.external_id
    )`;
}
