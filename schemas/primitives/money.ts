import { z } from 'zod';
import { ASSET_CODE, type AssetRegistry } from '../assets/registry.ts';

export const MAX_SCALE = 18;

// Money on the wire: integer minor units as a string, never a JSON number, never a decimal point.
export const moneySchema = z.strictObject({
  value: z
    .string({ error: 'must be a string of integer minor units, not a JSON number' })
    .regex(/^-?\d{1,38}$/, 'must be a signed integer of minor units (no decimal point, at most 38 digits)'),
  asset: z.string().regex(ASSET_CODE, 'must be a 3-letter upper-case code or X- followed by 2-10 upper-case letters or digits'),
  scale: z.number().int().min(0).max(MAX_SCALE),
});

export type Money = z.infer<typeof moneySchema>;

// Money as the service answers it: a sum or a difference of many values may have more digits
// than any one value sent.
export const moneyViewSchema = z.strictObject({
  value: z.string().regex(/^-?\d+$/),
  asset: z.string(),
  scale: z.number().int().min(0).max(MAX_SCALE),
});

export type ScaleProblem = { field: 'asset' | 'scale'; message: string };

// The registry check: a well-formed money value whose scale disagrees with its asset's scale.
export function checkMoneyScale(money: Money, registry: AssetRegistry): ScaleProblem | undefined {
  const expected = registry.scaleOf(money.asset);
  if (expected === undefined) {
    return { field: 'asset', message: `asset ${money.asset} is not in the asset registry` };
  }
  if (expected !== money.scale) {
    return { field: 'scale', message: `${money.asset} has scale ${expected} in the asset registry, not ${money.scale}` };
  }
  return undefined;
}
