import { AnalyzeOnGrowth } from '../../postgres/analyze-on-growth.ts';
import { withTransaction, type Pool } from '../../postgres/pool.ts';
import type { GraphChange, GraphNode, NodeRef } from '../port.ts';
import type { GraphReads } from '../shared/access.ts';
import { applyChanges } from '../shared/apply.ts';
import { DEFAULT_READ_BUDGET_MS, TraversalGraphStore } from '../shared/store.ts';
import { withReadBudget, type ReadPool } from './budget.ts';
import { postgresReads } from './reads.ts';
import { postgresWrites } from './writes.ts';

// The embedded GraphStore: PostgreSQL tables (infra/postgres/0005_graph.up.sql), traversed level
// by level by the shared traversals (platform/graph/shared), one set-based statement per level.
export class PostgresGraphStore extends TraversalGraphStore {
  private readonly growth: AnalyzeOnGrowth;

  constructor(
    private readonly pool: Pool,
    // readPool: a pool for reads alone, whose connections carry the read budget (budget.ts).
    private readonly options: { readBudgetMs?: number; readPool?: ReadPool } = {},
  ) {
    super();
    this.growth = new AnalyzeOnGrowth(pool, ['graph_applied', 'graph_nodes', 'graph_edges', 'graph_transfers']);
  }

  async apply(changes: GraphChange[]): Promise<void> {
    if (changes.length === 0) return;
    await withTransaction(this.pool, (db) => applyChanges(postgresWrites(db), changes));
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

  protected read<T>(tenantId: string, work: (reads: GraphReads) => Promise<T>): Promise<T> {
    return withReadBudget(this.options.readPool ?? this.pool, this.options.readBudgetMs ?? DEFAULT_READ_BUDGET_MS, (budget) => work(postgresReads(budget, tenantId)));
  }
}
