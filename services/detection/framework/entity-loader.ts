// Canonical entities for one tenant over one batch of evaluations: what prefetch loaded up front
// (the subjects and their holders), and, on demand, any other entity a detector asks for (a
// counterparty's account, its holder). The evaluations of a batch run side by side, and each asks
// for its counterparties one at a time: those asks are gathered until the event loop's next turn
// and read in one statement, and every evaluation of the batch shares the answers (a read per
// counterparty entity was the largest share of detection's statements: decision 0042).
import type { Pool } from '../../../platform/postgres/pool.ts';
import { entityKey, type EntityVersion } from './context.ts';

interface Wanted {
  object: string;
  id: string;
}

export class EntityLoader {
  // Every key read here so far: the entity, null when it has not been received, or its read.
  private readonly known = new Map<string, EntityVersion | null | Promise<EntityVersion | null>>();
  private pending: Map<string, Wanted> | null = null;
  private flushing: Promise<Map<string, EntityVersion | null>> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly tenantId: string,
    // What prefetch loaded (every key it asked for, null when absent).
    private readonly prefetched: ReadonlyMap<string, EntityVersion | null> = new Map(),
  ) {}

  // The current version of one entity, null when it has not been received: read with the other
  // keys asked for in the same turn of the event loop.
  get(object: string, externalId: string): Promise<EntityVersion | null> {
    const key = entityKey(object, externalId);
    const prefetched = this.prefetched.get(key);
    if (prefetched !== undefined) return Promise.resolve(prefetched);
    const found = this.known.get(key);
    if (found !== undefined) return Promise.resolve(found);
    if (!this.pending) {
      this.pending = new Map();
      this.flushing = new Promise<Map<string, EntityVersion | null>>((resolve, reject) => {
        setImmediate(() => {
          const wanted = [...this.pending!.values()];
          this.pending = null;
          readEntities(this.pool, this.tenantId, wanted).then(resolve, reject);
        });
      });
    }
    this.pending.set(key, { object, id: externalId });
    const read = this.flushing!.then(
      (rows) => {
        const version = rows.get(key) ?? null;
        this.known.set(key, version);
        return version;
      },
      (error: unknown) => {
        // A failed read is not remembered: the batch fails and is retried.
        this.known.delete(key);
        throw error;
      },
    );
    this.known.set(key, read);
    return read;
  }
}

// The entities found among the keys (absent ones are left out), by entityKey.
export async function readEntities(pool: Pool, tenantId: string, keys: readonly Wanted[]): Promise<Map<string, EntityVersion | null>> {
  const found = new Map<string, EntityVersion | null>();
  if (keys.length === 0) return found;
  const { rows } = await pool.query<{ object: string; external_id: string; occurred_at: Date; data: Record<string, unknown> }>({
    name: 'detect-prefetch-entities',
    // One lookup of the primary key per entity asked for (LIMIT 1 keeps the subquery from being
    // turned into a join). As a join, with the table's statistics behind its growth, it was
    // planned as a hash of the tenant's every entity: five times the time for 700 keys among
    // 40,000 entities, and a tenant's millions at scale.
    text: `SELECT k.object, k.external_id, e.occurred_at, e.data
             FROM unnest($2::text[], $3::text[]) AS k(object, external_id)
            CROSS JOIN LATERAL (
              SELECT e.occurred_at, e.data FROM canonical_entities e
               WHERE e.tenant_id = $1 AND e.object = k.object AND e.external_id = k.external_id
               LIMIT 1
            ) e`,
    values: [tenantId, keys.map((k) => k.object), keys.map((k) => k.id)],
  });
  for (const row of rows) found.set(entityKey(row.object, row.external_id), { externalId: row.external_id, occurredAt: row.occurred_at, data: row.data });
  return found;
}
