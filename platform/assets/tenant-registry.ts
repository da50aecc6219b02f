import { registryWith, type AssetRegistry } from '../../schemas/assets/registry.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Pool } from '../postgres/pool.ts';

const CACHE_TTL_MS = 30_000;

// Each tenant's asset registry: ISO 4217 plus the X- assets its operator registered. Cached per
// process; a newly registered asset is seen everywhere within CACHE_TTL_MS.
export class TenantAssetRegistry {
  private readonly cache = new Map<string, { registry: AssetRegistry; registered: ReadonlyMap<string, number>; expiresAt: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock = systemClock,
  ) {}

  // `db` lets a caller inside a transaction read through its own connection.
  async forTenant(tenantId: string, db: Pick<Pool, 'query'> = this.pool): Promise<AssetRegistry> {
    return (await this.load(tenantId, db)).registry;
  }

  // The tenant's own (X-) assets with their scales, for callers that list rather than look up.
  async registeredFor(tenantId: string): Promise<ReadonlyMap<string, number>> {
    return (await this.load(tenantId, this.pool)).registered;
  }

  private async load(tenantId: string, db: Pick<Pool, 'query'>) {
    const now = this.clock.now().getTime();
    const cached = this.cache.get(tenantId);
    if (cached && cached.expiresAt > now) return cached;
    const { rows } = await db.query<{ asset: string; scale: number }>(
      'SELECT asset, scale FROM tenant_assets WHERE tenant_id = $1',
      [tenantId],
    );
    const registered = new Map(rows.map((r) => [r.asset, r.scale]));
    const entry = { registry: registryWith(registered), registered, expiresAt: now + CACHE_TTL_MS };
    this.cache.set(tenantId, entry);
    return entry;
  }
}

export type RegisterAssetOutcome = { kind: 'registered' } | { kind: 'unknown_tenant' } | { kind: 'conflict'; scale: number };

// Registers a non-ISO asset for a tenant. Re-registering with the same scale is a no-op; a
// different scale is refused, since money already accepted was read with the first one.
export async function registerAsset(pool: Pool, tenantId: string, asset: string, scale: number): Promise<RegisterAssetOutcome> {
  const inserted = await pool.query(
    `INSERT INTO tenant_assets (tenant_id, asset, scale)
     SELECT tenant_id, $2, $3 FROM tenants WHERE tenant_id = $1
     ON CONFLICT (tenant_id, asset) DO NOTHING`,
    [tenantId, asset, scale],
  );
  if (inserted.rowCount === 1) return { kind: 'registered' };
  const { rows } = await pool.query<{ scale: number }>('SELECT scale FROM tenant_assets WHERE tenant_id = $1 AND asset = $2', [tenantId, asset]);
  const existing = rows[0];
  if (!existing) return { kind: 'unknown_tenant' };
  return existing.scale === scale ? { kind: 'registered' } : { kind: 'conflict', scale: existing.scale };
}
