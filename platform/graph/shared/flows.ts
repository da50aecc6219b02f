// The movement queries of every engine: cycles extended hop by hop in TypeScript (one statement
// per length), flows, two-hop patterns and shared attributes, with the same caps and `truncated`.

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
// hop's, no account visited twice. Extended one hop per statement for all partial paths at once.
export async function findCycles(reads: GraphReads, account: string, options: CycleOptions): Promise<{ cycles: Cycle[]; truncated: boolean }> {
  const tolerance = BigInt(Math.round(options.tolerance * Number(PPM)));
  const cycles: Cycle[] = [];
  let truncated = false;
  let paths: PartialPath[] = [{ movements: [], accounts: new Set([account]) }];
  for (let length = 1; length <= options.maxLength && paths.length > 0; length++) {
    const steps = paths.map((p) => {
      const last = p.movements[p.movements.length - 1];
      const first = p.movements[0]?.amount ?? null;
      return {
        node: last ? last.to : account,
        after: last ? last.occurredAt : options.since,
        low: first === null ? null : first - (first * tolerance) / PPM,
        high: first === null ? null : first + (first * tolerance) / PPM,
      };
    });
    const rows = length === 1 && options.firstHops ? firstSteps(account, options, options.firstHops) : await reads.cycleStep(steps, options.until, CYCLE_PATH_CAP + 1);
    if (rows === undefined) {
      truncated = true;
      break;
    }
    if (rows.length > CYCLE_PATH_CAP) truncated = true;
    const next: PartialPath[] = [];
    for (const { step, movement } of rows.slice(0, CYCLE_PATH_CAP)) {
      const path = paths[step]!;
      if (movement.to === account) {
        if (length >= options.minLength) cycles.push({ movements: [...path.movements, movement] });
      } else if (!path.accounts.has(movement.to) && length < options.maxLength) {
        next.push({ movements: [...path.movements, movement], accounts: new Set([...path.accounts, movement.to]) });
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

// The first level of a cycle search from payments the caller gave: those cycleStep would read
// (from the start, priced, in [since, until]), at most as many.
function firstSteps(account: string, options: CycleOptions, given: readonly TransferMovement[]): Array<{ step: number; movement: TransferMovement }> {
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
export async function scatterGather(reads: GraphReads, source: string, options: TwoHopOptions): Promise<ScatterGather> {
  const found = await reads.scatterGather(source, options);
  if (found === undefined) return { source, gathers: [], truncated: true };
  return { source, gathers: found.gathers, truncated: found.found > found.gathers.length };
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

// For each identifier, device or ip a party is linked to, the other parties linked to it.
export async function sharedAttributes(reads: GraphReads, party: string, limit: number): Promise<{ shared: SharedAttribute[]; truncated: boolean }> {
  const list = await reads.sharedAttributes(party, limit + 1);
  return { shared: (list ?? []).slice(0, limit), truncated: list === undefined || list.length > limit };
}
