// A tenant's money defaults (decision 0081): the detectors' USD defaults as they are for a USD
// tenant, else converted into its base asset with the latest USD rate valid at `at` (the rate a
// movement of that time would be converted with), else unavailable, saying why.
import { convertWith, ratesAt } from '../../../platform/fx/rates.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import { isoRegistry } from '../../../schemas/assets/registry.ts';
import type { MoneyDefaults } from '../framework/money-params.ts';

const USD_SCALE = 2;

export async function moneyDefaultsFor(db: Pick<Pool, 'query'>, tenantId: string, at: Date): Promise<MoneyDefaults> {
  const base = await baseAssetOf(db, tenantId);
  if (base === 'USD') return { kind: 'usd' };
  const scale = isoRegistry.scaleOf(base);
  const [rate] = await ratesAt(db, [{ asset: 'USD', base, at }]);
  if (!rate || scale === undefined) {
    return { kind: 'unavailable', reason: `the detector's money defaults are USD amounts and no USD/${base} rate (the tenant's base asset) was valid at ${at.toISOString()}` };
  }
  return { kind: 'converted', convert: (cents) => convertWith(rate, BigInt(cents), USD_SCALE, scale).toString() };
}
