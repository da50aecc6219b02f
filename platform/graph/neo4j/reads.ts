// The reads the shared traversals need (shared/access.ts), each one statement of cypher.ts over
// GraphNode nodes and EDGE and MOVEMENT relationships, its rows decoded into the port's types
// (bigint money, Dates from epoch milliseconds, attributes from JSON text).

import type { EdgeType, FlowSet, GraphEdge, NodeKind, SharedAttribute } from '../port.ts';
import { compare, type GraphReads } from '../shared/access.ts';
import { graphEdge, transferEdge } from '../shared/edges.ts';
import { COUNTERPARTY_COUNTS, CYCLE_STEP, FLOW, INCIDENT_EDGES, INCIDENT_EDGES_MANY, INCIDENT_TRANSFERS, INCIDENT_TRANSFERS_MANY, NODE_ATTRS, RECENT_MOVEMENTS, SCATTER_GATHER, SHARED_ATTRIBUTES } from './cypher.ts';
import { bigintOf, bigintOrNull, dateOf, dateOrNull, jsonOrNull, numberOf, type ReadBudget, type Row } from './session.ts';

// A row of INCIDENT_EDGES as the port's GraphEdge.
function toEdge(row: Row) {
  return graphEdge({
    type: row.type as EdgeType,
    from: { kind: row.fromKind as NodeKind, key: String(row.fromKey) },
    to: { kind: row.toKind as NodeKind, key: String(row.toKey) },
    qualifier: typeof row.qualifier === 'string' ? row.qualifier : '',
    validFrom: dateOrNull(row.validFrom),
    validTo: dateOrNull(row.validTo),
    count: row.count === null || row.count === undefined ? 0 : numberOf(row.count),
    sum: bigintOrNull(row.sum),
    unpriced: row.unpriced === null || row.unpriced === undefined ? 0 : numberOf(row.unpriced),
    firstAt: dateOrNull(row.firstAt),
    lastAt: dateOrNull(row.lastAt),
    attrs: jsonOrNull(row.attrs) ?? {},
  });
}

// The totals of a pair's movements.
function totalsOf(row: Row) {
  return { count: numberOf(row.count), sum: bigintOf(row.sum), unpriced: numberOf(row.unpriced), firstAt: dateOf(row.firstAt), lastAt: dateOf(row.lastAt) };
}

function toCounterparty(row: Row): FlowSet['counterparties'][number] {
  return {
    account: String(row.account),
    count: numberOf(row.count),
    sum: bigintOf(row.sum),
    unpriced: numberOf(row.unpriced),
    firstAt: dateOf(row.firstAt),
    lastAt: dateOf(row.lastAt),
  };
}

// The reads of one answer, in the budget's read transaction.
export function neo4jReads(budget: ReadBudget, tenant: string): GraphReads {
  return {
    get exhausted() {
      return budget.exhausted;
    },

    async storedEdges(q) {
      const rows = await budget.run(INCIDENT_EDGES, {
        tenant,
        frontier: q.frontier.map((n) => ({ kind: n.kind, key: n.key })),
        types: q.types,
        rebuilt: q.rebuilt,
        until: q.until,
        since: q.since,
        within: q.within ? q.within.map((n) => [n.kind, n.key]) : null,
        limit: q.limit,
      });
      return rows?.map(toEdge);
    },

    async rebuiltTransfers(q) {
      const rows = await budget.run(INCIDENT_TRANSFERS, {
        tenant,
        accounts: q.accounts,
        since: q.since,
        until: q.until,
        minAmount: q.minAmount,
        within: q.within,
        limit: q.limit,
      });
      return rows?.map((row) => transferEdge(String(row.src), String(row.dst), totalsOf(row)));
    },

    async storedEdgesMany(queries) {
      const rows = await budget.run(INCIDENT_EDGES_MANY, {
        tenant,
        requests: queries.map((q, i) => ({
          i,
          frontier: q.frontier.map((n) => ({ kind: n.kind, key: n.key })),
          types: q.types,
          rebuilt: q.rebuilt,
          until: q.until,
          since: q.since,
          limit: q.limit,
        })),
      });
      if (rows === undefined) return undefined;
      const lists: GraphEdge[][] = queries.map(() => []);
      for (const row of rows) lists[numberOf(row.i)] = (row.edges as Row[]).map(toEdge);
      return lists;
    },

    async rebuiltTransfersMany(queries) {
      const rows = await budget.run(INCIDENT_TRANSFERS_MANY, {
        tenant,
        requests: queries.map((q, i) => ({ i, accounts: q.accounts, since: q.since, until: q.until, minAmount: q.minAmount, limit: q.limit })),
      });
      if (rows === undefined) return undefined;
      const lists: GraphEdge[][] = queries.map(() => []);
      for (const row of rows) lists[numberOf(row.i)] = (row.pairs as Row[]).map((p) => transferEdge(String(p.src), String(p.dst), totalsOf(p)));
      return lists;
    },

    async nodeAttrs(entities) {
      const rows = await budget.run(NODE_ATTRS, { tenant, nodes: entities.map((n) => ({ kind: n.kind, key: n.key })) });
      const attrs = new Map<string, Record<string, unknown>>();
      for (const row of rows ?? []) attrs.set(`${String(row.kind)}:${String(row.key)}`, jsonOrNull(row.attrs) ?? {});
      return attrs;
    },

    async recentMovements(transfers, filter, limit) {
      const rows = await budget.run(RECENT_MOVEMENTS, {
        tenant,
        pairs: transfers.map((e, i) => ({ i, src: e.from.key, dst: e.to.key })),
        since: filter?.since ?? null,
        until: filter?.until ?? null,
        minAmount: filter?.minAmount ?? null,
        recent: limit,
      });
      const movements = rows?.map((row) => ({ pair: numberOf(row.i), movementId: String(row.movementId), occurredAt: dateOf(row.at), amount: bigintOrNull(row.amount) }));
      // Rows of one pair arrive in the subquery's order (latest first); kept so whatever the
      // order the pairs come in.
      return movements?.sort((a, b) => a.pair - b.pair || b.occurredAt.getTime() - a.occurredAt.getTime() || compare(b.movementId, a.movementId));
    },

    async cycleStep(steps, limit) {
      const rows = await budget.run(CYCLE_STEP, { tenant, paths: steps.map((s, i) => ({ i, ...s })), limit });
      return rows?.map((row) => ({
        step: numberOf(row.i),
        movement: { movementId: String(row.movementId), from: String(row.src), to: String(row.dst), occurredAt: dateOf(row.at), amount: bigintOf(row.amount) },
      }));
    },

    async flows(account, direction, window) {
      const rows = await budget.run(FLOW, { tenant, account, inbound: direction === 'in', since: window.since, until: window.until, limit: window.limit });
      if (rows === undefined) return undefined;
      const row = rows[0];
      if (!row) return { counterparties: [], accounts: 0, count: 0, sum: 0n };
      return {
        counterparties: (row.counterparties as Row[]).map(toCounterparty),
        accounts: numberOf(row.accounts),
        count: numberOf(row.totalCount),
        sum: bigintOf(row.totalSum),
      };
    },

    async counterpartyCounts(direction, atMost, windows) {
      const rows = await budget.run(COUNTERPARTY_COUNTS, {
        tenant,
        inbound: direction === 'in',
        atMost,
        windows: windows.map((w, i) => ({ i, key: w.account, since: w.since, until: w.until })),
      });
      if (rows === undefined) return undefined;
      const counts = windows.map(() => 0);
      for (const row of rows) counts[numberOf(row.i)] = numberOf(row.accounts);
      return counts;
    },

    async scatterGathers(requests) {
      const rows = await budget.run(SCATTER_GATHER, {
        tenant,
        requests: requests.map((r, i) => ({
          i,
          source: r.source,
          since: r.options.since,
          until: r.options.until,
          minIntermediaries: r.options.minIntermediaries,
          limit: r.options.limit,
        })),
      });
      if (rows === undefined) return undefined;
      const answers = requests.map(() => ({ gathers: [] as Array<{ account: string; intermediaries: string[]; sum: bigint }>, found: 0 }));
      for (const row of rows) {
        answers[numberOf(row.i)] = {
          gathers: (row.gathers as Row[]).map((g) => ({ account: String(g.account), intermediaries: (g.intermediaries as unknown[]).map(String), sum: bigintOf(g.sum) })),
          found: numberOf(row.found),
        };
      }
      return answers;
    },

    async sharedAttributes(requests) {
      const rows = await budget.run(SHARED_ATTRIBUTES, { tenant, requests: requests.map((r, i) => ({ i, party: r.party, limit: r.limit, until: r.until })) });
      if (rows === undefined) return undefined;
      const lists: SharedAttribute[][] = requests.map(() => []);
      for (const row of rows) {
        lists[numberOf(row.i)] = (row.shared as Row[]).map((r) => ({ via: { kind: r.kind as NodeKind, key: String(r.key) }, parties: (r.parties as unknown[]).map(String) }));
      }
      return lists;
    },
  };
}
