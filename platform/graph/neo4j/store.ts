import { randomUUID } from 'node:crypto';
import neo4j, { type Driver, type ManagedTransaction } from 'neo4j-driver';
import type { GraphChange, GraphNode, NodeRef } from '../port.ts';
import type { GraphReads } from '../shared/access.ts';
import { applyChanges } from '../shared/apply.ts';
import { DEFAULT_READ_BUDGET_MS, TraversalGraphStore } from '../shared/store.ts';
import { AWAIT_INDEXES, DELETE_TENANT_EVENTS, DELETE_TENANT_NODES, DELETE_TENANT_RETRACTIONS, DELETE_TENANT_VERSIONS, HOLDINGS, NODE, SCHEMA } from './cypher.ts';
import { neo4jReads } from './reads.ts';
import { jsonOrNull, numberOf, run, withReadBudget } from './session.ts';
import { neo4jWrites } from './writes.ts';

// How long migrate() waits for new indexes to come online.
const INDEX_WAIT_SECONDS = 300;
// Nodes deleted per transaction by deleteTenant.
const DELETE_BATCH = 5_000;
// What a schema statement's commit fails with when another transaction created the same rule.
const EQUIVALENT_RULE_EXISTS = 'Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists';

export interface Neo4jGraphStoreOptions {
  database?: string;
  readBudgetMs?: number;
}

export interface Neo4jConnection {
  uri: string;
  user: string;
  password?: string;
  database?: string;
}

// The GraphStore on Neo4j 5 (docs/decisions/0015-neo4j-graph.md): GraphNode nodes, EDGE and
// MOVEMENT relationships, every statement a constant of cypher.ts run through run(). The
// traversals are the shared ones (platform/graph/shared), level by level, one Cypher statement
// per level (reads.ts); apply's statements are in writes.ts.
export class Neo4jGraphStore extends TraversalGraphStore {
  private readonly database: string;

  constructor(
    private readonly driver: Driver,
    private readonly options: Neo4jGraphStoreOptions = {},
    // Closed by close() only when this store opened it (connect()).
    private readonly ownsDriver = false,
  ) {
    super();
    this.database = options.database ?? 'neo4j';
  }

  // A store on its own driver. Integers come back as bigint (no money or count is ever a float).
  static connect(connection: Neo4jConnection, options: Omit<Neo4jGraphStoreOptions, 'database'> = {}): Neo4jGraphStore {
    const driver = neo4j.driver(connection.uri, neo4j.auth.basic(connection.user, connection.password ?? ''), { useBigInt: true });
    return new Neo4jGraphStore(driver, { ...options, database: connection.database ?? 'neo4j' }, true);
  }

  async close(): Promise<void> {
    if (this.ownsDriver) await this.driver.close();
  }

  // The constraints and indexes of infra/neo4j, each IF NOT EXISTS (applying them again changes
  // nothing), each in a transaction of its own (Neo4j never mixes schema and data changes), then
  // waits for the indexes to come online.
  async migrate(): Promise<void> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      for (const statement of SCHEMA) {
        try {
          await session.executeWrite((tx) => run(tx, statement));
        } catch (error) {
          // Processes starting together on a new database (svc run api, the pipelines) migrate at
          // once: two can both find a rule missing, and the later commit then fails although IF NOT
          // EXISTS was asked (seen on 5.26 with four at once). Run again, it finds the rule.
          if ((error as { code?: string }).code !== EQUIVALENT_RULE_EXISTS) throw error;
          await session.executeWrite((tx) => run(tx, statement));
        }
      }
      await session.executeRead((tx) => run(tx, AWAIT_INDEXES, { seconds: INDEX_WAIT_SECONDS }));
    } finally {
      await session.close();
    }
  }

  async apply(changes: GraphChange[]): Promise<void> {
    if (changes.length === 0) return;
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      // A new token per attempt marks the events that attempt claims: executeWrite may retry the
      // whole transaction, also after a commit that went through but whose answer was lost, and a
      // retry must then claim nothing (the events are another attempt's) rather than apply twice.
      await session.executeWrite((tx) => applyChanges(neo4jWrites(tx, randomUUID()), changes));
    } finally {
      await session.close();
    }
  }

  async node(tenantId: string, node: NodeRef): Promise<GraphNode | null> {
    const rows = await this.readOnce((tx) => run(tx, NODE, { tenant: tenantId, kind: node.kind, key: node.key }));
    const row = rows[0];
    return row?.known === true ? { ...node, attrs: jsonOrNull(row.attrs) } : null;
  }

  // One bounded expansion per party, no read budget: bounded by the limit, it cannot run away.
  async holdings(tenantId: string, requests: Array<{ party: string; until: Date }>, limit: number): Promise<string[][]> {
    if (requests.length === 0) return [];
    const rows = await this.readOnce((tx) =>
      run(tx, HOLDINGS, { tenant: tenantId, requests: requests.map((r, i) => ({ i, party: r.party, until: r.until })), limit }),
    );
    const lists: string[][] = requests.map(() => []);
    for (const row of rows) lists[numberOf(row.i)]!.push(String(row.account));
    return lists.map((list) => list.sort());
  }

  // Deletes a tenant's network (nodes, edges, movements and applied events), in batches. Not part
  // of the port: for tests and for offboarding a tenant.
  async deleteTenant(tenantId: string): Promise<void> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      for (const statement of [DELETE_TENANT_NODES, DELETE_TENANT_EVENTS, DELETE_TENANT_RETRACTIONS, DELETE_TENANT_VERSIONS]) {
        for (;;) {
          const rows = await session.executeWrite((tx) => run(tx, statement, { tenant: tenantId, batch: DELETE_BATCH }));
          if (numberOf(rows[0]?.deleted ?? 0) === 0) break;
        }
      }
    } finally {
      await session.close();
    }
  }

  private async readOnce<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.READ });
    try {
      return await session.executeRead(work);
    } finally {
      await session.close();
    }
  }

  protected read<T>(tenantId: string, work: (reads: GraphReads) => Promise<T>): Promise<T> {
    return withReadBudget(this.driver, this.database, this.options.readBudgetMs ?? DEFAULT_READ_BUDGET_MS, (budget) => work(neo4jReads(budget, tenantId)));
  }
}
