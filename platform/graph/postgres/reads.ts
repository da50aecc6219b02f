// The reads the shared traversals need (shared/access.ts), as SQL over graph_nodes, graph_edges
// and graph_transfers (infra/postgres/0005_graph.up.sql): each one statement, its rows decoded.

import type { EdgeType, FlowSet, GraphEdge, NodeKind, SharedAttribute } from '../port.ts';
import type { GraphReads } from '../shared/access.ts';
import { graphEdge, transferEdge } from '../shared/edges.ts';
import type { ReadBudget } from './budget.ts';

interface EdgeRow {
  src_kind: string;
  src_key: string;
  type: string;
  dst_kind: string;
  dst_key: string;
  qualifier: string;
  valid_from: Date | null;
  valid_to: Date | null;
  count: bigint | string;
  sum: string | null;
  unpriced: bigint | string;
  first_at: Date | null;
  last_at: Date | null;
  attrs: Record<string, unknown>;
}

function toEdge(row: EdgeRow): GraphEdge {
  return graphEdge({
    type: row.type as EdgeType,
    from: { kind: row.src_kind as NodeKind, key: row.src_key },
    to: { kind: row.dst_kind as NodeKind, key: row.dst_key },
    qualifier: row.qualifier,
    validFrom: row.valid_from,
    validTo: row.valid_to,
    count: Number(row.count),
    sum: row.sum === null ? null : BigInt(row.sum),
    unpriced: Number(row.unpriced),
    firstAt: row.first_at,
    lastAt: row.last_at,
    attrs: row.attrs,
  });
}

// The totals of a group of movements (a pair's, a counterparty's).
interface TotalsRow {
  count: bigint;
  sum: string;
  unpriced: bigint;
  first_at: Date;
  last_at: Date;
}

function totalsOf(row: TotalsRow) {
  return { count: Number(row.count), sum: BigInt(row.sum), unpriced: Number(row.unpriced), firstAt: row.first_at, lastAt: row.last_at };
}

function toCounterparty(row: TotalsRow & { account: string }): FlowSet['counterparties'][number] {
  return { account: row.account, count: Number(row.count), sum: BigInt(row.sum), unpriced: Number(row.unpriced), firstAt: row.first_at, lastAt: row.last_at };
}

// Whether edge `e` is an observed edge read in a window: then it is its sightings inside the window
// (w, sightingsIn): how many, the first and the last, and an edge seen only outside it is left out.
const observedInWindow = (since: string, until: string) =>
  `(e.origin IS NULL AND e.type <> 'transfer' AND (${since} IS NOT NULL OR ${until} IS NOT NULL))`;

// A lateral over edge `e`: its sightings in the window, when observedInWindow.
const sightingsIn = (since: string, until: string) => `
      LEFT JOIN LATERAL (
        SELECT count(*) AS count, min(s.occurred_at) AS first_at, max(s.occurred_at) AS last_at
          FROM graph_sightings s
         WHERE ${observedInWindow(since, until)}
           AND s.tenant_id = e.tenant_id AND s.src_kind = e.src_kind AND s.src_key = e.src_key AND s.type = e.type
           AND s.dst_kind = e.dst_kind AND s.dst_key = e.dst_key
           AND (${since} IS NULL OR s.occurred_at >= ${since}) AND (${until} IS NULL OR s.occurred_at <= ${until})
      ) w ON true`;

const edgeColumns = (since: string, until: string) => {
  const windowed = observedInWindow(since, until);
  return `e.src_kind, e.src_key, e.type, e.dst_kind, e.dst_key, e.qualifier, e.valid_from, e.valid_to,
           CASE WHEN ${windowed} THEN w.count ELSE e.count END AS count, e.sum::text AS sum, e.unpriced,
           CASE WHEN ${windowed} THEN w.first_at ELSE e.first_at END AS first_at,
           CASE WHEN ${windowed} THEN w.last_at ELSE e.last_at END AS last_at, e.attrs`;
};

const seenInWindow = (since: string, until: string) => `(NOT ${observedInWindow(since, until)} OR w.count > 0)`;

// The stored edges touching the frontier from one side (the frontier node is the edge's `near`
// end), passing the filter: declared edges valid, observed edges seen, at some time in the window.
const incidentSide = (near: 'src' | 'dst', far: 'src' | 'dst') => `
    SELECT ${edgeColumns('$7::timestamptz', '$6::timestamptz')}
      FROM unnest($2::text[], $3::text[]) AS f(kind, key)
      JOIN graph_edges e ON e.tenant_id = $1 AND e.${near}_kind = f.kind AND e.${near}_key = f.key
      ${sightingsIn('$7::timestamptz', '$6::timestamptz')}
     WHERE ($4::text[] IS NULL OR e.type = ANY ($4)) AND ${seenInWindow('$7::timestamptz', '$6::timestamptz')}
       AND NOT ($5::boolean AND e.type = 'transfer')
       AND ($6::timestamptz IS NULL OR coalesce(e.valid_from, e.first_at) IS NULL OR coalesce(e.valid_from, e.first_at) <= $6)
       AND ($7::timestamptz IS NULL OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) IS NULL
            OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) >= $7)
       AND ($8::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($8::text[], $9::text[]) AS s(kind, key)
                                          WHERE s.kind = e.${far}_kind AND s.key = e.${far}_key))`;

// Transfer pairs rebuilt from the movements touching the frontier's accounts from one side.
const transfersSide = (near: 'src' | 'dst', far: 'src' | 'dst') => `
      SELECT t.src, t.dst, count(*) AS count, coalesce(sum(t.amount), 0)::text AS sum, count(*) FILTER (WHERE t.amount IS NULL) AS unpriced,
             min(t.occurred_at) AS first_at, max(t.occurred_at) AS last_at
        FROM unnest($2::text[]) AS f(key)
        JOIN graph_transfers t ON t.tenant_id = $1 AND t.${near} = f.key
       WHERE ($3::timestamptz IS NULL OR t.occurred_at >= $3) AND ($4::timestamptz IS NULL OR t.occurred_at <= $4)
         AND ($5::numeric IS NULL OR t.amount >= $5)
         AND ($6::text[] IS NULL OR t.${far} = ANY ($6))
       GROUP BY t.src, t.dst`;

// incidentSide for many frontiers: inside a LATERAL over the requests `r`, each its own frontier
// (a JSON list), types, window and limit. Each frontier node's edges are a LATERAL of their own,
// fenced by OFFSET 0: joined instead, the planner hashes a scan of the tenant's edges for every
// request (it cannot tell how short a frontier is).
const incidentSideMany = (near: 'src' | 'dst') => `
    SELECT ${edgeColumns('r.since', 'r.until')}
      FROM jsonb_to_recordset(r.frontier::jsonb) AS f(kind text, key text)
     CROSS JOIN LATERAL (SELECT * FROM graph_edges x WHERE x.tenant_id = $1 AND x.${near}_kind = f.kind AND x.${near}_key = f.key OFFSET 0) e
      ${sightingsIn('r.since', 'r.until')}
     WHERE (r.types IS NULL OR e.type IN (SELECT jsonb_array_elements_text(r.types::jsonb))) AND ${seenInWindow('r.since', 'r.until')}
       AND NOT (r.rebuilt AND e.type = 'transfer')
       AND (r.until IS NULL OR coalesce(e.valid_from, e.first_at) IS NULL OR coalesce(e.valid_from, e.first_at) <= r.until)
       AND (r.since IS NULL OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) IS NULL
            OR coalesce(e.valid_to, CASE WHEN e.origin IS NULL THEN e.last_at END) >= r.since)`;

// transfersSide for many sets of accounts (a JSON list each), inside a LATERAL over the requests;
// each account's movements a fenced LATERAL of their own, as in incidentSideMany.
const transfersSideMany = (near: 'src' | 'dst') => `
      SELECT t.src, t.dst, count(*) AS count, coalesce(sum(t.amount), 0)::text AS sum, count(*) FILTER (WHERE t.amount IS NULL) AS unpriced,
             min(t.occurred_at) AS first_at, max(t.occurred_at) AS last_at
        FROM jsonb_array_elements_text(r.accounts::jsonb) AS f(key)
       CROSS JOIN LATERAL (SELECT * FROM graph_transfers x WHERE x.tenant_id = $1 AND x.${near} = f.key OFFSET 0) t
       WHERE (r.since IS NULL OR t.occurred_at >= r.since) AND (r.until IS NULL OR t.occurred_at <= r.until)
         AND (r.min_amount IS NULL OR t.amount >= r.min_amount)
       GROUP BY t.src, t.dst`;

// The reads of one answer, in the budget's read-only snapshot.
export function postgresReads(budget: ReadBudget, tenantId: string): GraphReads {
  return {
    get exhausted() {
      return budget.exhausted;
    },

    async storedEdges(q) {
      const rows = await budget.query<EdgeRow>({
        name: 'graph-incident',
        text: `${incidentSide('src', 'dst')} UNION ALL ${incidentSide('dst', 'src')} LIMIT $10`,
        values: [
          tenantId,
          q.frontier.map((n) => n.kind),
          q.frontier.map((n) => n.key),
          q.types,
          q.rebuilt,
          q.until,
          q.since,
          q.within ? q.within.map((n) => n.kind) : null,
          q.within ? q.within.map((n) => n.key) : null,
          q.limit,
        ],
      });
      return rows?.map(toEdge);
    },

    async rebuiltTransfers(q) {
      const rows = await budget.query<TotalsRow & { src: string; dst: string }>({
        name: 'graph-incident-transfers',
        text: `${transfersSide('src', 'dst')} UNION ALL ${transfersSide('dst', 'src')} LIMIT $7`,
        values: [tenantId, q.accounts, q.since, q.until, q.minAmount?.toString() ?? null, q.within, q.limit],
      });
      return rows?.map((row) => transferEdge(row.src, row.dst, totalsOf(row)));
    },

    async storedEdgesMany(queries) {
      const rows = await budget.query<EdgeRow & { i: number }>({
        name: 'graph-incident-many',
        text: `SELECT r.i, s.*
                 FROM unnest($2::int[], $3::text[], $4::text[], $5::boolean[], $6::timestamptz[], $7::timestamptz[], $8::int[])
                      AS r(i, frontier, types, rebuilt, until, since, lim)
                 CROSS JOIN LATERAL (${incidentSideMany('src')} UNION ALL ${incidentSideMany('dst')} LIMIT r.lim) s`,
        values: [
          tenantId,
          queries.map((_, i) => i),
          queries.map((q) => JSON.stringify(q.frontier.map((n) => ({ kind: n.kind, key: n.key })))),
          queries.map((q) => (q.types === null ? null : JSON.stringify(q.types))),
          queries.map((q) => q.rebuilt),
          queries.map((q) => q.until),
          queries.map((q) => q.since),
          queries.map((q) => q.limit),
        ],
      });
      if (rows === undefined) return undefined;
      const lists: GraphEdge[][] = queries.map(() => []);
      for (const row of rows) lists[row.i]!.push(toEdge(row));
      return lists;
    },

    async rebuiltTransfersMany(queries) {
      const rows = await budget.query<TotalsRow & { i: number; src: string; dst: string }>({
        name: 'graph-incident-transfers-many',
        text: `SELECT r.i, s.*
                 FROM unnest($2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::numeric[], $7::int[])
                      AS r(i, accounts, since, until, min_amount, lim)
                 CROSS JOIN LATERAL (${transfersSideMany('src')} UNION ALL ${transfersSideMany('dst')} LIMIT r.lim) s`,
        values: [
          tenantId,
          queries.map((_, i) => i),
          queries.map((q) => JSON.stringify(q.accounts)),
          queries.map((q) => q.since),
          queries.map((q) => q.until),
          queries.map((q) => q.minAmount?.toString() ?? null),
          queries.map((q) => q.limit),
        ],
      });
      if (rows === undefined) return undefined;
      const lists: GraphEdge[][] = queries.map(() => []);
      for (const row of rows) lists[row.i]!.push(transferEdge(row.src, row.dst, totalsOf(row)));
      return lists;
    },

    async nodeAttrs(entities) {
      const rows = await budget.query<{ kind: string; key: string; attrs: Record<string, unknown> }>({
        name: 'graph-node-attrs',
        text: `SELECT n.kind, n.key, n.attrs FROM unnest($2::text[], $3::text[]) AS u(kind, key)
                 JOIN graph_nodes n ON n.tenant_id = $1 AND n.kind = u.kind AND n.key = u.key`,
        values: [tenantId, entities.map((n) => n.kind), entities.map((n) => n.key)],
      });
      const attrs = new Map<string, Record<string, unknown>>();
      for (const row of rows ?? []) attrs.set(`${row.kind}:${row.key}`, row.attrs);
      return attrs;
    },

    async recentMovements(transfers, filter, limit) {
      const rows = await budget.query<{ i: number; movement_id: string; occurred_at: Date; amount: string | null }>({
        name: 'graph-recent-movements',
        text: `SELECT u.i, t.movement_id, t.occurred_at, t.amount::text AS amount
                 FROM unnest($2::int[], $3::text[], $4::text[]) AS u(i, src, dst)
                 CROSS JOIN LATERAL (
                   SELECT movement_id, occurred_at, amount FROM graph_transfers
                    WHERE tenant_id = $1 AND src = u.src AND dst = u.dst
                      AND ($5::timestamptz IS NULL OR occurred_at >= $5) AND ($6::timestamptz IS NULL OR occurred_at <= $6)
                      AND ($7::numeric IS NULL OR amount >= $7)
                    ORDER BY occurred_at DESC, movement_id DESC LIMIT $8
                 ) t`,
        values: [
          tenantId,
          transfers.map((_, i) => i),
          transfers.map((e) => e.from.key),
          transfers.map((e) => e.to.key),
          filter?.since ?? null,
          filter?.until ?? null,
          filter?.minAmount?.toString() ?? null,
          limit,
        ],
      });
      return rows?.map((row) => ({ pair: row.i, movementId: row.movement_id, occurredAt: row.occurred_at, amount: row.amount === null ? null : BigInt(row.amount) }));
    },

    async cycleStep(steps, limit) {
      const rows = await budget.query<{ i: number; movement_id: string; src: string; dst: string; occurred_at: Date; amount: string }>({
        name: 'graph-cycle-step',
        text: `SELECT u.i, t.movement_id, t.src, t.dst, t.occurred_at, t.amount::text AS amount
                 FROM unnest($2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::numeric[], $7::numeric[]) AS u(i, node, after, until, low, high)
                 JOIN graph_transfers t ON t.tenant_id = $1 AND t.src = u.node
                WHERE t.occurred_at >= u.after AND t.occurred_at <= u.until
                  AND t.amount IS NOT NULL AND t.amount BETWEEN coalesce(u.low, t.amount) AND coalesce(u.high, t.amount)
                LIMIT $8`,
        values: [
          tenantId,
          steps.map((_, i) => i),
          steps.map((s) => s.node),
          steps.map((s) => s.after),
          steps.map((s) => s.until),
          steps.map((s) => s.low?.toString() ?? null),
          steps.map((s) => s.high?.toString() ?? null),
          limit,
        ],
      });
      return rows?.map((row) => ({
        step: row.i,
        movement: { movementId: row.movement_id, from: row.src, to: row.dst, occurredAt: row.occurred_at, amount: BigInt(row.amount) },
      }));
    },

    async flows(account, direction, window) {
      const [near, far] = direction === 'in' ? ['dst', 'src'] : ['src', 'dst'];
      const rows = await budget.query<TotalsRow & { account: string; total_count: bigint; total_sum: string; accounts: bigint }>({
        name: `graph-flow-${direction}`,
        text: `SELECT ${far} AS account, count(*) AS count, coalesce(sum(amount), 0)::text AS sum, count(*) FILTER (WHERE amount IS NULL) AS unpriced,
                      min(occurred_at) AS first_at, max(occurred_at) AS last_at,
                      sum(count(*)) OVER ()::bigint AS total_count, (sum(coalesce(sum(amount), 0)) OVER ())::text AS total_sum, count(*) OVER () AS accounts
                 FROM graph_transfers
                WHERE tenant_id = $1 AND ${near} = $2 AND occurred_at >= $3 AND occurred_at <= $4 AND ${far} <> $2
                GROUP BY ${far}
                ORDER BY coalesce(sum(amount), 0) DESC, ${far}
                LIMIT $5`,
        values: [tenantId, account, window.since, window.until, window.limit],
      });
      if (rows === undefined) return undefined;
      const first = rows[0];
      return {
        counterparties: rows.map(toCounterparty),
        accounts: first ? Number(first.accounts) : 0,
        count: first ? Number(first.total_count) : 0,
        sum: first ? BigInt(first.total_sum) : 0n,
      };
    },

    // Each window stops at atMost: an account's payees come in key order (src, dst, …), so the
    // distinct ones are read one after another and the scan ends at the bound; its payers come in
    // time order (tenant_id, dst, occurred_at), and only the window's rows are sorted, with no sums.
    async counterpartyCounts(direction, atMost, windows) {
      const [near, far] = direction === 'in' ? ['dst', 'src'] : ['src', 'dst'];
      const rows = await budget.query<{ i: number; accounts: number }>({
        name: `graph-counterparty-counts-${direction}`,
        text: `SELECT r.i, found.accounts
                 FROM unnest($2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS r(i, account, since, until)
                CROSS JOIN LATERAL (
                  SELECT count(*)::int AS accounts FROM (
                    SELECT DISTINCT t.${far} FROM graph_transfers t
                     WHERE t.tenant_id = $1 AND t.${near} = r.account AND t.occurred_at >= r.since AND t.occurred_at <= r.until AND t.${far} <> r.account
                     LIMIT $6
                  ) distinct_others
                ) found`,
        values: [tenantId, windows.map((_, i) => i), windows.map((w) => w.account), windows.map((w) => w.since), windows.map((w) => w.until), atMost],
      });
      if (rows === undefined) return undefined;
      const counts = windows.map(() => 0);
      for (const row of rows) counts[row.i] = row.accounts;
      return counts;
    },

    // One search per request, each its own index ranges (LATERAL): never a join planned over the
    // tenant's movements for the requests together.
    async scatterGathers(requests) {
      const rows = await budget.query<{ i: number; account: string; intermediaries: string[]; sum: string; gathers: bigint }>({
        name: 'graph-scatter-gather',
        text: `SELECT r.i, g.account, g.intermediaries, g.sum, g.gathers
                 FROM unnest($2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::int[]) AS r(i, source, since, until, least_mids, lim)
                CROSS JOIN LATERAL (
                  SELECT gather.account, array_agg(gather.mid ORDER BY gather.mid) AS intermediaries, sum(gather.sum)::text AS sum,
                         count(*) OVER () AS gathers,
                         row_number() OVER (ORDER BY count(*) DESC, sum(gather.sum) DESC, gather.account) AS n
                    FROM (
                      SELECT t.dst AS account, s.mid, coalesce(sum(t.amount), 0) AS sum
                        FROM (
                          SELECT dst AS mid, min(occurred_at) AS first_at FROM graph_transfers
                           WHERE tenant_id = $1 AND src = r.source AND dst <> r.source AND occurred_at >= r.since AND occurred_at <= r.until
                           GROUP BY dst
                        ) s
                        JOIN graph_transfers t ON t.tenant_id = $1 AND t.src = s.mid
                       WHERE t.occurred_at >= s.first_at AND t.occurred_at <= r.until AND t.dst <> r.source AND t.dst <> s.mid
                       GROUP BY t.dst, s.mid
                    ) gather
                   GROUP BY gather.account HAVING count(*) >= r.least_mids
                   ORDER BY n LIMIT r.lim
                ) g
                ORDER BY r.i, g.n`,
        values: [
          tenantId,
          requests.map((_, i) => i),
          requests.map((r) => r.source),
          requests.map((r) => r.options.since),
          requests.map((r) => r.options.until),
          requests.map((r) => r.options.minIntermediaries),
          requests.map((r) => r.options.limit),
        ],
      });
      if (rows === undefined) return undefined;
      const answers = requests.map(() => ({ gathers: [] as Array<{ account: string; intermediaries: string[]; sum: bigint }>, found: 0 }));
      for (const row of rows) {
        const answer = answers[row.i]!;
        answer.gathers.push({ account: row.account, intermediaries: row.intermediaries, sum: BigInt(row.sum) });
        answer.found = Number(row.gathers);
      }
      return answers;
    },

    async sharedAttributes(requests) {
      const rows = await budget.query<{ i: number; kind: string; key: string; parties: string[] }>({
        name: 'graph-shared-attributes',
        text: `SELECT r.i, s.kind, s.key, s.parties
                 FROM unnest($2::int[], $3::text[], $4::int[], $5::timestamptz[]) AS r(i, party, lim, until)
                CROSS JOIN LATERAL (
                  SELECT mine.dst_kind AS kind, mine.dst_key AS key, array_agg(DISTINCT other.src_key ORDER BY other.src_key) AS parties,
                         row_number() OVER (ORDER BY count(DISTINCT other.src_key) DESC, mine.dst_kind, mine.dst_key) AS n
                    FROM graph_edges mine
                    JOIN graph_edges other ON other.tenant_id = mine.tenant_id AND other.dst_kind = mine.dst_kind AND other.dst_key = mine.dst_key
                                          AND other.type = 'shares' AND other.src_kind = 'party' AND other.src_key <> mine.src_key
                                          AND (coalesce(other.valid_from, other.first_at) IS NULL OR coalesce(other.valid_from, other.first_at) <= r.until)
                   WHERE mine.tenant_id = $1 AND mine.src_kind = 'party' AND mine.src_key = r.party AND mine.type = 'shares'
                     AND (coalesce(mine.valid_from, mine.first_at) IS NULL OR coalesce(mine.valid_from, mine.first_at) <= r.until)
                   GROUP BY mine.dst_kind, mine.dst_key
                   ORDER BY n
                   LIMIT r.lim
                ) s
                ORDER BY r.i, s.n`,
        values: [tenantId, requests.map((_, i) => i), requests.map((r) => r.party), requests.map((r) => r.limit), requests.map((r) => r.until)],
      });
      if (rows === undefined) return undefined;
      const lists: SharedAttribute[][] = requests.map(() => []);
      for (const r of rows) lists[r.i]!.push({ via: { kind: r.kind as NodeKind, key: r.key }, parties: r.parties });
      return lists;
    },
  };
}
