import { ISO_4217_SCALES } from './iso4217.ts';

// Where the minor-unit scale of an asset comes from: the ISO table, plus the non-ISO assets
// (X-...) the operator registered for a tenant.
export interface AssetRegistry {
  scaleOf(asset: string): number | undefined;
}

export const ASSET_CODE = /^(?:[A-Z]{3}|X-[A-Z0-9]{2,10})$/;
export const NON_ISO_ASSET = /^X-[A-Z0-9]{2,10}$/;

export const isoRegistry: AssetRegistry = {
  scaleOf: (asset) => (Object.hasOwn(ISO_4217_SCALES, asset) ? ISO_4217_SCALES[asset] : undefined),
};

export function registryWith(extra: ReadonlyMap<string, number>): AssetRegistry {
  if (extra.size === 0) return isoRegistry;
  return { scaleOf: (asset) => isoRegistry.scaleOf(asset) ?? extra.get(asset) };
}
