import { isoRegistry } from '../../schemas/assets/registry.ts';
import type { Pool } from '../postgres/pool.ts';

const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type CreateTenantOutcome =
  | { kind: 'created' }
  | { kind: 'exists' }
  | { kind: 'invalid'; message: string };

// A tenant and its base asset, the asset every movement is normalised to. The base asset must
// be an ISO 4217 currency: a tenant's own X- assets are registered after the tenant exists.
export async function createTenant(pool: Pool, tenantId: string, baseAsset: string): Promise<CreateTenantOutcome> {
  if (!TENANT_ID.test(tenantId)) {
    return { kind: 'invalid', message: 'tenant id must be 1-64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit' };
  }
  if (isoRegistry.scaleOf(baseAsset) === undefined) {
    return { kind: 'invalid', message: `base asset ${baseAsset} is not an ISO 4217 currency with a minor unit` };
  }
  const result = await pool.query(
    'INSERT INTO tenants (tenant_id, base_asset) VALUES ($1, $2) ON CONFLICT (tenant_id) DO NOTHING',
    [tenantId, baseAsset],
  );
  return result.rowCount === 1 ? { kind: 'created' } : { kind: 'exists' };
}

// The asset a tenant's movements are normalised to (set when the tenant is created, never changed).
export async function baseAssetOf(db: Pick<Pool, 'query'>, tenantId: string): Promise<string> {
  const { rows } = await db.query<{ base_asset: string }>({
    name: 'tenant-base-asset',
    text: 'SELECT base_asset FROM tenants WHERE tenant_id = $1',
    values: [tenantId],
  });
  if (!rows[0]) throw new Error(`unknown tenant ${tenantId}`);
  return rows[0].base_asset;
}

// Whether the tenant exists: a command reading a tenant's things tells a mistyped tenant from one
// that has none.
export async function tenantExists(db: Pick<Pool, 'query'>, tenantId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [tenantId]);
  return rows.length > 0;
}
