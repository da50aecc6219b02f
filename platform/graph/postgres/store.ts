import { AnalyzeOnGrowth } from '../../postgres/analyze-on-growth.ts';
import { withTransaction, type Pool } from '../../postgres/pool.ts';
import type { CycleOptions, EgoOptions, GraphChange, GraphNode, GraphStore, NodeRef, PathOptions, TwoHopOptions, EdgeFilter } from '../port.ts';
import { applyChanges } from './apply.ts';
import { withReadBudget } from './budget.ts';
import { findCycles, flowSet, gatherScatter, scatterGather, sharedAttributes } from './flows.ts';
import { expand, shortestPaths } from './traverse.ts';

// How long one graph read may take before it answers with what it has (truncated).
export const DEFAULT_READ_BUDGET_MS = 2_000;

// The embedded GraphStore: PostgreSQL tables (infra/postgres/0005_graph.up.sql), traversed level
// by level with one set-based statement per level.
export class PostgresGraphStore implements GraphStore {
  private readonly growth: AnalyzeOnGrowth;

  constructor(
    private readonly pool: Pool,
    private readonly options: { readBudgetMs?: number } = {},
  ) {
    this.growth = new AnalyzeOnGrowth(pool, ['graph_applied', 'graph_nodes', 'graph_edges', 'graph_transfers']);
  }

  async apply(changes: GraphChange[]): Promise<void> {
    if (changes.length === 0) return;
    await withTransaction(this.pool, (db) => applyChanges(db, changes));
    this.growth.note(changes.length);
  }

  async node(tenantId: string, node: NodeRef): Promise<GraphNode | null> {
    const { rows } = await this.pool.query<{ attrs: Record<string, unknown> | null; known: boolean }>({
      name: 'graph-node',
      text: `SELECT (SELECT attrs FROM graph_nodes WHERE tenant_id = $1 AND kind = $2 AND key = $3) AS attrs,
                    EXISTS (SELECT 1 FROM graph_nodes WHERE tenant_id = $1 AND kind = $2 AND key = $3)
                    OR EXISTS (SELECT 1 FROM graph_edges WHERE tenant_id = $1 AND src_kind = $2 AND src_key = $3)
                    OR EXISTS (SELECT 1 FROM graph_edges WHERE tenant_id = $1 AND dst_kind = $2 AND dst_key = $3) AS known`,
      values: [tenantId, node.kind, node.key],
    });
    return rows[0]?.known ? { ...node, attrs: rows[0].attrs } : null;
  }

  egoNetwork(tenantId: string, center: NodeRef, options: EgoOptions) {
    return this.read((budget) => expand(budget, tenantId, center, options));
  }

  shortestPaths(tenantId: string, from: NodeRef, to: NodeRef, options: PathOptions) {
    return this.read((budget) => shortestPaths(budget, tenantId, from, to, options));
  }

  component(tenantId: string, start: NodeRef, options: { filter?: EdgeFilter; nodeCap: number }) {
    return this.read((budget) => expand(budget, tenantId, start, { ...options, depth: Number.POSITIVE_INFINITY }));
  }

  cycles(tenantId: string, account: string, options: CycleOptions) {
    return this.read((budget) => findCycles(budget, tenantId, account, options));
  }

  fanIn(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }) {
    return this.read((budget) => flowSet(budget, tenantId, account, 'in', window));
  }

  fanOut(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }) {
    return this.read((budget) => flowSet(budget, tenantId, account, 'out', window));
  }

  scatterGather(tenantId: string, source: string, options: TwoHopOptions) {
    return this.read((budget) => scatterGather(budget, tenantId, source, options));
  }

  gatherScatter(tenantId: string, hub: string, window: { since: Date; until: Date; limit: number }) {
    return this.read((budget) => gatherScatter(budget, tenantId, hub, window));
  }

  sharedAttributes(tenantId: string, party: string, options: { limit: number }) {
    return this.read((budget) => sharedAttributes(budget, tenantId, party, options.limit));
  }

  // One index range per party, no read budget: bounded by the limit, it cannot run away.
  async holdings(tenantId: string, requests: Array<{ party: string; until: Date }>, limit: number): Promise<string[][]> {
    if (requests.length === 0) return [];
    const { rows } = await this.pool.query<{ i: number; account: string }>({
      name: 'graph-holdings',
      text: `SELECT r.i, h.dst_key AS account
               FROM json_to_recordset($2::json) AS r(i int, p text, u timestamptz)
              CROSS JOIN LATERAL (
                SELECT e.dst_key FROM graph_edges e
                 WHERE e.tenant_id = $1 AND e.src_kind = 'party' AND e.src_key = r.p AND e.type = 'holds' AND e.dst_kind = 'account'
                   AND (coalesce(e.valid_from, e.first_at) IS NULL OR coalesce(e.valid_from, e.first_at) <= r.u)
                 GROUP BY e.dst_key ORDER BY e.dst_key LIMIT $3
              ) h`,
      values: [tenantId, JSON.stringify(requests.map((r, i) => ({ i, p: r.party, u: r.until }))), limit],
    });
    const lists: string[][] = requests.map(() => []);
    for (const row of rows) lists[row.i]!.push(row.account);
    return lists.map((list) => list.sort());
  }

  private read<T>(work: Parameters<typeof withReadBudget<T>>[2]): Promise<T> {
    return withReadBudget(this.pool, this.options.readBudgetMs ?? DEFAULT_READ_BUDGET_MS, work);
  }
}
