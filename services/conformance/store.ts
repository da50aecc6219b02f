// The conformance tallies and drift states in PostgreSQL (migration 0055, decision 0077).
import type { PoolClient } from '../../platform/postgres/pool.ts';

type Db = Pick<PoolClient, 'query'>;

// Items of one tenant's family received in one bucket: accepted (code and path '') or refused
// with this first finding.
export interface TallyRow {
  tenantId: string;
  family: string;
  bucket: Date;
  code: string;
  path: string;
  items: number;
}

// Adds the counts to what is stored, in key order (two API processes adding the same keys lock
// their rows in one order). Committed without waiting for the WAL flush: these are statistics,
// and a crash losing the last of them changes an hour's share by a few items at most.
export async function addTallies(db: Db, rows: readonly TallyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query({
    name: 'conformance-add-tallies',
    text: `WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true))
           INSERT INTO conformance_tallies AS c (tenant_id, family, bucket, code, path, items)
           SELECT t, f, b, k, p, n FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::bigint[]) AS u(t, f, b, k, p, n), unflushed
            ORDER BY t, f, b, k, p
           ON CONFLICT (tenant_id, family, bucket, code, path) DO UPDATE SET items = c.items + EXCLUDED.items`,
    values: [rows.map((r) => r.tenantId), rows.map((r) => r.family), rows.map((r) => r.bucket), rows.map((r) => r.code), rows.map((r) => r.path), rows.map((r) => r.items)],
  });
}

export interface FamilyCounts {
  tenantId: string;
  family: string;
  received: number;
  refused: number;
}

// Per tenant and family with items received in [from, to): how many, and how many refused.
export async function recentCounts(db: Db, from: Date, to: Date): Promise<FamilyCounts[]> {
  const { rows } = await db.query<{ tenant_id: string; family: string; received: string; refused: string }>({
    name: 'conformance-recent-counts',
    text: `SELECT tenant_id, family, sum(items)::text AS received, coalesce(sum(items) FILTER (WHERE code <> ''), 0)::text AS refused
             FROM conformance_tallies WHERE bucket >= $1 AND bucket < $2
            GROUP BY tenant_id, family`,
    values: [from, to],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, family: r.family, received: Number(r.received), refused: Number(r.refused) }));
}

type Key = { tenantId: string; family: string };

// The same counts over [from, to) for these families only (each read by its key's range).
export async function countsOf(db: Db, keys: readonly Key[], from: Date, to: Date): Promise<FamilyCounts[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; family: string; received: string; refused: string }>({
    name: 'conformance-counts-of',
    text: `SELECT k.t AS tenant_id, k.f AS family, coalesce(sum(c.items), 0)::text AS received, coalesce(sum(c.items) FILTER (WHERE c.code <> ''), 0)::text AS refused
             FROM unnest($1::text[], $2::text[]) AS k(t, f)
             LEFT JOIN conformance_tallies c ON c.tenant_id = k.t AND c.family = k.f AND c.bucket >= $3 AND c.bucket < $4
            GROUP BY k.t, k.f`,
    values: [keys.map((k) => k.tenantId), keys.map((k) => k.family), from, to],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, family: r.family, received: Number(r.received), refused: Number(r.refused) }));
}

export interface Problem {
  code: string;
  path: string;
  items: number;
}

// The most frequent first findings of the family's refused items in [from, to).
export async function topProblems(db: Db, tenantId: string, family: string, from: Date, to: Date, limit: number): Promise<Problem[]> {
  const { rows } = await db.query<{ code: string; path: string; items: string }>({
    name: 'conformance-top-problems',
    text: `SELECT code, path, sum(items)::text AS items FROM conformance_tallies
            WHERE tenant_id = $1 AND family = $2 AND bucket >= $3 AND bucket < $4 AND code <> ''
            GROUP BY code, path ORDER BY sum(items) DESC, code, path LIMIT $5`,
    values: [tenantId, family, from, to, limit],
  });
  return rows.map((r) => ({ code: r.code, path: r.path, items: Number(r.items) }));
}

// Marks the families drifting; returns those that were not already (their drift starts now).
export async function startDrifting(db: Db, keys: readonly Key[], now: Date): Promise<Key[]> {
  if (keys.length === 0) return [];
  const { rows } = await db.query<{ tenant_id: string; family: string }>({
    name: 'conformance-start-drifting',
    text: `INSERT INTO conformance_states AS s (tenant_id, family, drifting, changed_at)
           SELECT t, f, true, $3 FROM unnest($1::text[], $2::text[]) AS u(t, f) ORDER BY t, f
           ON CONFLICT (tenant_id, family) DO UPDATE SET drifting = true, changed_at = $3 WHERE NOT s.drifting
           RETURNING tenant_id, family`,
    values: [keys.map((k) => k.tenantId), keys.map((k) => k.family), now],
  });
  return rows.map((r) => ({ tenantId: r.tenant_id, family: r.family }));
}

// Marks the families conforming again (a later drift is announced anew).
export async function stopDrifting(db: Db, keys: readonly Key[], now: Date): Promise<void> {
  if (keys.length === 0) return;
  await db.query({
    name: 'conformance-stop-drifting',
    text: `UPDATE conformance_states s SET drifting = false, changed_at = $3
             FROM unnest($1::text[], $2::text[]) AS u(t, f)
            WHERE s.tenant_id = u.t AND s.family = u.f AND s.drifting`,
    values: [keys.map((k) => k.tenantId), keys.map((k) => k.family), now],
  });
}

// Marks conforming again the drifting families with nothing received since `from`: a feed that
// resumes after a silence is judged afresh, and announced if it drifts then.
export async function stopDriftingSilent(db: Db, from: Date, now: Date): Promise<void> {
  await db.query({
    name: 'conformance-stop-drifting-silent',
    text: `UPDATE conformance_states s SET drifting = false, changed_at = $2
            WHERE s.drifting
              AND NOT EXISTS (SELECT 1 FROM conformance_tallies c WHERE c.tenant_id = s.tenant_id AND c.family = s.family AND c.bucket >= $1)`,
    values: [from, now],
  });
}

// Tallies older than any window still judges.
export async function pruneTallies(db: Db, before: Date): Promise<void> {
  await db.query({ name: 'conformance-prune', text: 'DELETE FROM conformance_tallies WHERE bucket < $1', values: [before] });
}
