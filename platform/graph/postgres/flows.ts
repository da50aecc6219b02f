import type { Cycle, CycleOptions, FlowSet, GatherScatter, ScatterGather, SharedAttribute, TransferMovement, TwoHopOptions, NodeKind } from '../port.ts';
import type { ReadBudget } from './budget.ts';

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
    const rows = await budget.query<{ i: number; movement_id: string; src: string; dst: string; occurred_at: Date; amount: string }>({
      name: 'graph-cycle-step',
      text: `SELECT u.i, t.movement_id, t.src, t.dst, t.occurred_at, t.amount::text AS amount
               FROM unnest($2::int[], $3::text[], $4::timestamptz[], $5::numeric[], $6::numeric[]) AS u(i, node, after, low, high)
               JOIN graph_transfers t ON t.tenant_id = $1 AND t.src = u.node
              WHERE t.occurred_at >= u.after AND t.occurred_at <= $7
                AND t.amount IS NOT NULL AND t.amount BETWEEN coalesce(u.low, t.amount) AND coalesce(u.high, t.amount)
              LIMIT $8`,
      values: [
        tenantId,
        paths.map((_, i) => i),
        paths.map((p) => (p.movements.length > 0 ? p.movements[p.movements.length - 1]!.to : account)),
        paths.map((p) => (p.movements.length > 0 ? p.movements[p.movements.length - 1]!.occurredAt : options.since)),
        paths.map((p) => (p.movements.length > 0 ? (p.movements[0]!.amount! - (p.movements[0]!.amount! * tolerance) / PPM).toString() : null)),
        paths.map((p) => (p.movements.length > 0 ? (p.movements[0]!.amount! + (p.movements[0]!.amount! * tolerance) / PPM).toString() : null)),
        options.until,
        CYCLE_PATH_CAP + 1,
      ],
    });
    if (rows === undefined) {
      truncated = true;
      break;
    }
    if (rows.length > CYCLE_PATH_CAP) truncated = true;
    const next: PartialPath[] = [];
    for (const row of rows.slice(0, CYCLE_PATH_CAP)) {
      const path = paths[row.i]!;
      const movement: TransferMovement = { movementId: row.movement_id, from: row.src, to: row.dst, occurredAt: row.occurred_at, amount: BigInt(row.amount) };
      if (row.dst === account) {
        if (length >= options.minLength) cycles.push({ movements: [...path.movements, movement] });
      } else if (!path.accounts.has(row.dst) && length < options.maxLength) {
        next.push({ movements: [...path.movements, movement], accounts: new Set([...path.accounts, row.dst]) });
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

interface FlowRow {
  account: string;
  count: bigint;
  sum: string;
  unpriced: bigint;
  first_at: Date;
  last_at: Date;
}

function toCounterparty(row: FlowRow): FlowSet['counterparties'][number] {
  return { account: row.account, count: Number(row.count), sum: BigInt(row.sum), unpriced: Number(row.unpriced), firstAt: row.first_at, lastAt: row.last_at };
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
  const [near, far] = direction === 'in' ? ['dst', 'src'] : ['src', 'dst'];
  const rows = await budget.query<FlowRow & { total_count: bigint; total_sum: string; accounts: bigint }>({
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
  const list = rows ?? [];
  return {
    account,
    counterparties: list.map(toCounterparty),
    count: list[0] ? Number(list[0].total_count) : 0,
    sum: list[0] ? BigInt(list[0].total_sum) : 0n,
    truncated: rows === undefined || (list[0] !== undefined && Number(list[0].accounts) > list.length),
  };
}

// Source → intermediaries → one account that gathers from at least `minIntermediaries` of them:
// each intermediary's outflow no earlier than its first inflow from the source, all in the window.
export async function scatterGather(budget: ReadBudget, tenantId: string, source: string, options: TwoHopOptions): Promise<ScatterGather> {
  const rows = await budget.query<{ account: string; intermediaries: string[]; sum: string; gathers: bigint }>({
    name: 'graph-scatter-gather',
    text: `WITH scatter AS (
             SELECT dst AS mid, min(occurred_at) AS first_at FROM graph_transfers
              WHERE tenant_id = $1 AND src = $2 AND dst <> $2 AND occurred_at >= $3 AND occurred_at <= $4
              GROUP BY dst
           ), gather AS (
             SELECT t.dst AS account, s.mid, coalesce(sum(t.amount), 0) AS sum
               FROM scatter s JOIN graph_transfers t ON t.tenant_id = $1 AND t.src = s.mid
              WHERE t.occurred_at >= s.first_at AND t.occurred_at <= $4 AND t.dst <> $2 AND t.dst <> s.mid
              GROUP BY t.dst, s.mid
           )
           SELECT account, array_agg(mid ORDER BY mid) AS intermediaries, sum(sum)::text AS sum, count(*) OVER () AS gathers
             FROM gather GROUP BY account HAVING count(*) >= $5
            ORDER BY count(*) DESC, sum(sum) DESC, account LIMIT $6`,
    values: [tenantId, source, options.since, options.until, options.minIntermediaries, options.limit],
  });
  const list = rows ?? [];
  return {
    source,
    gathers: list.map((r) => ({ account: r.account, intermediaries: r.intermediaries, sum: BigInt(r.sum) })),
    truncated: rows === undefined || (list[0] !== undefined && Number(list[0].gathers) > list.length),
  };
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
  const rows = await budget.query<{ kind: string; key: string; parties: string[] }>({
    name: 'graph-shared-attributes',
    text: `SELECT mine.dst_kind AS kind, mine.dst_key AS key, array_agg(DISTINCT other.src_key ORDER BY other.src_key) AS parties
             FROM graph_edges mine
             JOIN graph_edges other ON other.tenant_id = mine.tenant_id AND other.dst_kind = mine.dst_kind AND other.dst_key = mine.dst_key
                                   AND other.type = 'shares' AND other.src_kind = 'party' AND other.src_key <> mine.src_key
            WHERE mine.tenant_id = $1 AND mine.src_kind = 'party' AND mine.src_key = $2 AND mine.type = 'shares'
            GROUP BY mine.dst_kind, mine.dst_key
            ORDER BY count(DISTINCT other.src_key) DESC, mine.dst_kind, mine.dst_key
            LIMIT $3`,
    values: [tenantId, party, limit + 1],
  });
  const list = rows ?? [];
  return {
    shared: list.slice(0, limit).map((r) => ({ via: { kind: r.kind as NodeKind, key: r.key }, parties: r.parties })),
    truncated: rows === undefined || list.length > limit,
  };
}
