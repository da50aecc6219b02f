import { z } from 'zod';

// GET /console/v1/assets: every asset the tenant's money may be in, with its minor-unit scale
// (ISO 4217 plus the tenant's registered X- assets), and the tenant's base asset (the one
// detection totals and graph amounts and filters are in). The console formats money with it.
const assetScale = z.strictObject({ asset: z.string(), scale: z.number().int().min(0) });
export const consoleAssetsResponseSchema = z.strictObject({
  base_asset: assetScale,
  assets: z.array(assetScale),
});

export type ConsoleAssetsResponse = z.infer<typeof consoleAssetsResponseSchema>;
