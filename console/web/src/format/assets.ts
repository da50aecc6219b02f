import { currentSession, get } from '../api.ts';
import type { ConsoleAssetsResponse } from '../../../../schemas/console/assets.ts';

// The session tenant's asset scales (ISO 4217 plus its X- assets) and base asset, read once per
// session from GET /console/v1/assets; a login to another tenant reads them again.
type AssetScale = ConsoleAssetsResponse['base_asset'];
let loaded: { tenant: string; base: AssetScale; scales: ReadonlyMap<string, number> } | undefined;
let pending: Promise<void> | undefined;

export function ensureAssets(): Promise<void> {
  const tenant = currentSession()?.user.tenant;
  if (tenant === undefined || loaded?.tenant === tenant) return Promise.resolve();
  pending ??= get<ConsoleAssetsResponse>('/assets')
    .then((body) => useAssets(tenant, body))
    // Without the list the console still works: amounts then show in minor units, marked so, and
    // the next view asks again.
    .catch(() => undefined)
    .finally(() => {
      pending = undefined;
    });
  return pending;
}

export const scaleOf = (asset: string): number | undefined => loaded?.scales.get(asset);
export const baseAsset = (): AssetScale | undefined => loaded?.base;

// Also for tests that hold the list already.
export function useAssets(tenant: string, body: ConsoleAssetsResponse): void {
  loaded = { tenant, base: body.base_asset, scales: new Map(body.assets.map((a) => [a.asset, a.scale])) };
}
