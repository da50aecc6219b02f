// Money as an analyst reads it in summaries and explanations: `12,345.00 USD`, major units of the
// asset's ISO 4217 scale; an asset without a known scale is written in minor units, saying so.
import { isoRegistry } from '../../../schemas/assets/registry.ts';

export function formatMoney(minor: bigint | string, asset: string): string {
  const value = BigInt(minor);
  const scale = isoRegistry.scaleOf(asset);
  if (scale === undefined) return `${value} minor units of ${asset}`;
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = scale > 0 ? `.${digits.slice(digits.length - scale)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction} ${asset}`;
}
