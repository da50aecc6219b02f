// The movement queries of every engine: cycles extended hop by hop in TypeScript (one statement
// per length, for one search or many), flows, two-hop patterns and shared attributes, with the
// same caps and `truncated`.

import type { Cycle, CycleOptions, FlowSet, GatherScatter, ScatterGather, SharedAttribute, TransferMovement, TwoHopOptions } from '../port.ts';
import type { GraphReads } from './access.ts';

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
// hop's, no account visited twice. Extended one hop per statement for all partial paths at once,
// those of every search asked for together (one statement per length for all of them): one
// answer per search, in order, each the same as its search alone would give.
export async function findCycles(reads: GraphReads, requests: ReadonlyArray<{ account: string; options: CycleOptions }>): Promise<Array<{ cycles: Cycle[]; truncated: boolean }>> {
  const searches: Search[] = requests.map(({ account, options }) => ({
    account,
    options,
    tolerance: BigInt(Math.round(options.tolerance * Number(PPM))),
    cycles: [],
    truncated: false,
    done: false,
    paths: [{ movements: [], accounts: new Set([account]) }],
  }));
  for (let length = 1; ; length++) {
    const active = searches.filter((s) => !s.done && s.paths.length > 0 && length <= s.options.maxLength);
    if (active.length === 0) break;
    const found = await nextHops(reads, active, length);
    for (const search of active) extend(search, found.get(search), length);
  }
  return searches.map((s) => {
    s.cycles.sort((x, y) => x.movements[0]!.occurredAt.getTime() - y.movements[0]!.occurredAt.getTime() || x.movements.length - y.movements.length);
    return { cycles: s.cycles.slice(0, s.options.limit), truncated: s.truncated };
  });
}

interface Search {
  account: string;
  options: CycleOptions;
  // In millionths.
  tolerance: bigint;
  cycles: Cycle[];
  truncated: boolean;
  // Stopped (enough cycles, or the read budget ran out).
  done: boolean;
  paths: PartialPath[];
}

type StepRow = { step: number; movement: TransferMovement };

// The next hop of every partial path of the searches, per search (its path's index as `step`);
// undefined for a search whose hops could not be read. A search's first hops come from the
// payments it was given, when it was given them; the others' are read in one statement. That
// statement returns at most (CYCLE_PATH_CAP + 1) rows times the searches in it: reaching that,
// every search in it is told it was cut short (a search alone is, exactly when it has more than
// CYCLE_PATH_CAP, as before).
async function nextHops(reads: GraphReads, active: Search[], length: number): Promise<Map<Search, StepRow[] | undefined>> {
  const found = new Map<Search, StepRow[] | undefined>();
  const steps: Parameters<GraphReads['cycleStep']>[0] = [];
  const owners: Array<{ search: Search; first: number }> = [];
  const ownerOf: number[] = [];
  for (const search of active) {
    const { account, options } = search;
    if (length === 1 && options.firstHops) {
      found.set(search, firstSteps(account, options, options.firstHops));
      continue;
    }
    owners.push({ search, first: steps.length });
    found.set(search, []);
    for (const p of search.paths) {
      const last = p.movements[p.movements.length - 1];
      const firstAmount = p.movements[0]?.amount ?? null;
      ownerOf.push(owners.length - 1);
      steps.push({
        node: last ? last.to : account,
        after: last ? last.occurredAt : options.since,
        until: options.until,
        low: firstAmount === null ? null : firstAmount - (firstAmount * search.tolerance) / PPM,
        high: firstAmount === null ? null : firstAmount + (firstAmount * search.tolerance) / PPM,
      });
    }
  }
  if (steps.length === 0) return found;
  const limit = owners.length * (CYCLE_PATH_CAP + 1);
  const rows = await reads.cycleStep(steps, limit);
  if (rows === undefined) {
    for (const { search } of owners) found.set(search, undefined);
    return found;
  }
  for (const { step, movement } of rows) {
    const owner = owners[ownerOf[step]!]!;
    found.get(owner.search)!.push({ step: step - owner.first, movement });
  }
  if (rows.length >= limit) for (const { search } of owners) search.truncated = true;
  return found;
}

// One length more of a search from its paths' next hops.
function extend(search: Search, rows: StepRow[] | undefined, length: number): void {
  const { account, options } = search;
  if (rows === undefined) {
    search.truncated = true;
    search.done = true;
    return;
  }
  if (rows.length > CYCLE_PATH_CAP) search.truncated = true;
  const next: PartialPath[] = [];
  for (const { step, movement } of rows.slice(0, CYCLE_PATH_CAP)) {
    const path = search.paths[step]!;
    if (movement.to === account) {
      if (length >= options.minLength) search.cycles.push({ movements: [...path.movements, movement] });
    } else if (!path.accounts.has(movement.to) && length < options.maxLength) {
      next.push({ movements: [...path.movements, movement], accounts: new Set([...path.accounts, movement.to]) });
    }
  }
  if (search.cycles.length >= options.limit) {
    search.truncated = search.truncated || search.cycles.length > options.limit || next.length > 0;
    search.done = true;
  }
  search.paths = next;
}

// The first level of a cycle search from payments the caller gave: those cycleStep would read
// (from the start, priced, in [since, until]), at most as many.
function firstSteps(account: string, options: CycleOptions, given: readonly TransferMovement[]): StepRow[] {
  return given
    .filter((m) => m.from === account && m.amount !== null && m.occurredAt >= options.since && m.occurredAt <= options.until)
    .slice(0, CYCLE_PATH_CAP + 1)
    .map((movement) => ({ step: 0, movement }));
}

// The accounts that sent to (fan-in) or received from (fan-out) an account in a window, largest
// sum first, with totals over all of them (not only the `limit` listed).
export async function flowSet(reads: GraphReads, account: string, direction: 'in' | 'out', window: { since: Date; until: Date; limit: number }): Promise<FlowSet> {
  const totals = await reads.flows(account, direction, window);
  if (totals === undefined) return { account, counterparties: [], count: 0, sum: 0n, truncated: true };
  const { counterparties, count, sum } = totals;
  return { account, counterparties, count, sum, truncated: totals.accounts > counterparties.length };
}

// Source → intermediaries → one account that gathers from at least `minIntermediaries` of them:
// each intermediary's outflow no earlier than its first inflow from the source, all in the window.
// One answer per request, in order, all read in one statement.
export async function scatterGather(reads: GraphReads, requests: ReadonlyArray<{ source: string; options: TwoHopOptions }>): Promise<ScatterGather[]> {
  const found = await reads.scatterGathers([...requests]);
  return requests.map(({ source }, i) => {
    const one = found?.[i];
    if (one === undefined) return { source, gathers: [], truncated: true };
    return { source, gathers: one.gathers, truncated: one.found > one.gathers.length };
  });
}

// Many sources into a hub and out of it to many targets, in one window.
export async function gatherScatter(reads: GraphReads, hub: string, window: { since: Date; until: Date; limit: number }): Promise<GatherScatter> {
  const inflow = await flowSet(reads, hub, 'in', window);
  const outflow = await flowSet(reads, hub, 'out', window);
  return gatherScatterOf(hub, inflow, outflow);
}

// A hub's gather-scatter from its fan-in and its fan-out over one window.
export function gatherScatterOf(hub: string, inflow: FlowSet, outflow: FlowSet): GatherScatter {
  return {
    hub,
    sources: inflow.counterparties,
    targets: outflow.counterparties,
    inSum: inflow.sum,
    outSum: outflow.sum,
    truncated: inflow.truncated || outflow.truncated,
  };
}

// For each identifier, device or ip a party is linked to, the other parties linked to it. One
// answer per request, in order, all read in one statement.
export async function sharedAttributes(reads: GraphReads, requests: ReadonlyArray<{ party: string; limit: number; until: Date }>): Promise<Array<{ shared: SharedAttribute[]; truncated: boolean }>> {
  const lists = await reads.sharedAttributes(requests.map(({ party, limit, until }) => ({ party, limit: limit + 1, until })));
  return requests.map(({ limit }, i) => {
    const list = lists?.[i];
    return { shared: (list ?? []).slice(0, limit), truncated: list === undefined || list.length > limit };
  });
}
