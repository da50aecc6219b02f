// The console's only money formatter: every amount on screen goes through formatMoney/formatMinor.
import { scaleOf } from './assets.ts';

const INTEGER = /^-?\d+$/;

// Minor units of `asset` as a decimal with thousands separators, by the asset's scale in the
// tenant's registry: formatMoney('15488800', 'USD') = "154,888.00 USD". Exact: string arithmetic
// only, so amounts beyond 2^53 keep every digit.
export function formatMoney(minor: string | number | bigint, asset: string): string {
  return formatMinor(minor, scaleOf(asset), asset);
}

// As formatMoney with a known scale (money objects from the API carry theirs). Without a scale the
// amount stays in minor units and says so, rather than guessing a decimal point.
export function formatMinor(minor: string | number | bigint, scale: number | undefined, asset: string): string {
  const text = typeof minor === 'number' && !Number.isSafeInteger(minor) ? '' : String(minor).trim();
  if (!INTEGER.test(text)) return `${String(minor)} ${asset}`.trim();
  const negative = text.startsWith('-');
  const digits = (negative ? text.slice(1) : text).replace(/^0+(?=\d)/, '');
  const suffix = asset ? ` ${asset}` : '';
  if (scale === undefined || !Number.isInteger(scale) || scale < 0) return `${negative ? '-' : ''}${group(digits)}${suffix} (minor units)`;
  const padded = digits.padStart(scale + 1, '0');
  const whole = group(padded.slice(0, padded.length - scale));
  const fraction = scale > 0 ? `.${padded.slice(padded.length - scale)}` : '';
  const isZero = /^0*$/.test(padded);
  return `${negative && !isZero ? '-' : ''}${whole}${fraction}${suffix}`;
}

const group = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

// What an analyst types ("1,500.5") to minor units of a scale ("150050"), for amount filters;
// undefined when it is not a non-negative amount with at most `scale` decimals.
export function parseAmount(text: string, scale: number): string | undefined {
  const m = /^(\d+)(?:\.(\d*))?$/.exec(text.replace(/[,\s_]/g, ''));
  if (!m) return undefined;
  const fraction = m[2] ?? '';
  if (fraction.length > scale) return undefined;
  return `${m[1]}${fraction.padEnd(scale, '0')}`.replace(/^0+(?=\d)/, '');
}
