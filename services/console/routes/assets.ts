import type { FastifyInstance } from 'fastify';
import { baseAssetOf } from '../../../platform/tenants/tenants.ts';
import { ISO_4217_SCALES } from '../../../schemas/assets/iso4217.ts';
import { consoleAssetsResponseSchema, type ConsoleAssetsResponse } from '../../../schemas/console/assets.ts';
import { consoleContext } from '../app.ts';
import type { ConsoleRouteDeps } from './common.ts';

// The session tenant's asset registry as a list, so the web app formats money by the same scales
// the API validated it with. Read once per session by the console; not audited (no customer data).
export function registerAssetRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  app.get('/console/v1/assets', { schema: { response: { 200: consoleAssetsResponseSchema } } }, async (request): Promise<ConsoleAssetsResponse> => {
    const tenantId = consoleContext(request).user.tenant_id;
    const registered = await deps.assets.registeredFor(tenantId);
    const base = await baseAssetOf(deps.pool, tenantId);
    const iso = Object.entries(ISO_4217_SCALES).map(([asset, scale]) => ({ asset, scale }));
    const own = [...registered].map(([asset, scale]) => ({ asset, scale }));
    return {
      // createTenant accepts only an ISO 4217 base asset with a minor unit.
      base_asset: { asset: base, scale: ISO_4217_SCALES[base] ?? 0 },
      assets: [...iso, ...own].sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0)),
    };
  });
}
