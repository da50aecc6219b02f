// The movement queries of the PostgreSQL adapter (postgres/flows.ts) over MOVEMENT relationships:
// the same answers, caps and `truncated`.

import type { Cycle, CycleOptions, FlowSet, GatherScatter, NodeKind, ScatterGather, SharedAttribute, TransferMovement, TwoHopOptions } from '../port.ts';
import { CYCLE_STEP, FLOW_IN, FLOW_OUT, SCATTER_GATHER, SHARED_ATTRIBUTES } from './cypher.ts';
import { bigintOf, dateOf, numberOf, type ReadBudget, type Row } from './session.ts';

// Partial paths a cycle search keeps per length; more and it stops there and says so.
const CYCLE_PATH_CAP = 20_000;
// Tolerance is applied in integer arithmetic, in millionths.
const PPM = 1_000_000n;

interface PartialPath {
  movements: TransferMovement[];
  accounts: Set<string>;
}

// Time-ordered cycles through an account: chains of transfers a0 → a1 → … → a0, each no earlier
// than the one before, all inside the window, every amount within the tolerance of the first
// hop's, no account visited twice. Extended one hop per statement for all partial paths at once.
export async function findCycles(budget: ReadBudget, tenantId: string, account: string, options: CycleOptions): Promise<{ cycles: Cycle[]; truncated: boolean }> {
  const tolerance = BigInt(Math.round(options.tolerance * Number(PPM)));
  const cycles: Cycle[] = [];
  let truncated = false;
  let paths: PartialPath[] = [{ movements: [], accounts: new Set([account]) }];
  for (let length = 1; length <= options.maxLength && paths.length > 0; length++) {
    const rows = await budget.run(CYCLE_STEP, {
      tenant: tenantId,
      paths: paths.map((p, i) => {
        const last = p.movements[p.movements.length - 1];
        const first = p.movements[0]?.amount ?? null;
        return {
          i,
          node: last ? last.to : account,
          after: last ? last.occurredAt : options.since,
          low: first === null ? null : first - (first * tolerance) / PPM,
          high: first === null ? null : first + (first * tolerance) / PPM,
        };
      }),
      until: options.until,
      limit: CYCLE_PATH_CAP + 1,
    });
    if (rows === undefined) {
      truncated = true;
      break;
    }
    if (rows.length > CYCLE_PATH_CAP) truncated = true;
    const next: PartialPath[] = [];
    for (const row of rows.slice(0, CYCLE_PATH_CAP)) {
      const path = paths[numberOf(row.i)]!;
      const dst = String(row.dst);
      const movement: TransferMovement = { movementId: String(row.movementId), from: String(row.src), to: dst, occurredAt: dateOf(row.at), amount: bigintOf(row.amount) };
      if (dst === account) {
        if (length >= options.minLength) cycles.push({ movements: [...path.movements, movement] });
      } else if (!path.accounts.has(dst) && length < options.maxLength) {
        next.push({ movements: [...path.movements, movement], accounts: new Set([...path.accounts, dst]) });
      }
    }
    if (cycles.length >= options.limit) {
      truncated = truncated || cycles.length > options.limit || next.length > 0;
      break;
    }
    paths = next;
  }
  cycles.sort((x, y) => x.movements[0]!.occurredAt.getTime() - y.movements[0]!.occurredAt.getTime() || x.movements.length - y.movements.length);
  return { cycles: cycles.slice(0, options.limit), truncated };
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

// The accounts that sent to (fan-in) or received from (fan-out) an account in a window, largest
// sum first, with totals over all of them (not only the `limit` listed).
export async function flowSet(
  budget: ReadBudget,
  tenantId: string,
  account: string,
  direction: 'in' | 'out',
  window: { since: Date; until: Date; limit: number },
): Promise<FlowSet> {
  const rows = await budget.run(direction === 'in' ? FLOW_IN : FLOW_OUT, {
    tenant: tenantId,
    account,
    since: window.since,
    until: window.until,
    limit: window.limit,
  });
  const row = rows?.[0];
  if (!row) return { account, counterparties: [], count: 0, sum: 0n, truncated: rows === undefined };
  const listed = (row.counterparties as Row[]).map(toCounterparty);
  return {
    account,
    counterparties: listed,
    count: numberOf(row.totalCount),
    sum: bigintOf(row.totalSum),
    truncated: numberOf(row.accounts) > listed.length,
  };
}

// Source → intermediaries → one account that gathers from at least `minIntermediaries` of them:
// each intermediary's outflow no earlier than its first inflow from the source, all in the window.
export async function scatterGather(budget: ReadBudget, tenantId: string, source: string, options: TwoHopOptions): Promise<ScatterGather> {
  const rows = await budget.run(SCATTER_GATHER, {
    tenant: tenantId,
    source,
    since: options.since,
    until: options.until,
    minIntermediaries: options.minIntermediaries,
    limit: options.limit,
  });
  const row = rows?.[0];
  if (!row) return { source, gathers: [], truncated: rows === undefined };
  const gathers = (row.gathers as Row[]).map((g) => ({
    account: String(g.account),
    intermediaries: (g.intermediaries as unknown[]).map(String),
    sum: bigintOf(g.sum),
  }));
  return { source, gathers, truncated: numberOf(row.found) > gathers.length };
}

// Many sources into a hub and out of it to many targets, in one window.
export async function gatherScatter(budget: ReadBudget, tenantId: string, hub: string, window: { since: Date; until: Date; limit: number }): Promise<GatherScatter> {
  const inflow = await flowSet(budget, tenantId, hub, 'in', window);
  const outflow = await flowSet(budget, tenantId, hub, 'out', window);
  return {
    hub,
    sources: inflow.counterparties,
    targets: outflow.counterparties,
    inSum: inflow.sum,
    outSum: outflow.sum,
    truncated: inflow.truncated || outflow.truncated,
  };
}

// For each identifier, device or ip a party is linked to, the other parties linked to it.
export async function sharedAttributes(budget: ReadBudget, tenantId: string, party: string, limit: number): Promise<{ shared: SharedAttribute[]; truncated: boolean }> {
  const rows = await budget.run(SHARED_ATTRIBUTES, { tenant: tenantId, party, limit: limit + 1 });
  const list = rows ?? [];
  return {
    shared: list.slice(0, limit).map((r) => ({ via: { kind: r.kind as NodeKind, key: String(r.key) }, parties: (r.parties as unknown[]).map(String) })),
    truncated: rows === undefined || list.length > limit,
  };
}
