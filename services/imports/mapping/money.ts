import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import type { FieldRule } from '../../../schemas/imports/mapping.ts';
import { ASSET_CODE } from '../../../schemas/assets/registry.ts';
import type { Money } from '../../../schemas/primitives/money.ts';
import { SCHEMA, fail, ok, sourceValue, type FieldOutcome, type Result, type SourceRow } from './values.ts';

// Money targets of an import row: the amount text of the `value` part and the code of the
// `asset` part to Money {value: integer minor units as text, asset, scale}. Exact text and BigInt
// work throughout, never a float. Whether the asset code is well formed and the scale matches the
// registry is left to the event's validation afterwards (checkMoneyScale).
//
// Amounts: surrounding spaces; a leading + or -; an accounting negative in parentheses,
// "(1,234.50)" (spaces allowed just inside, no sign inside as well). units decimal (default):
// digits with at most one decimal_separator (default "."); ".5" and "5." are read as 0.5 and 5;
// group_separator (default none) only before the decimal separator and only between digits, in
// groups of three (1,234,567) or in the Indian lakh and crore grouping (12,34,567: the last group
// three, the ones before it two). "12,34" is refused: most likely a decimal comma read with the
// wrong separators, which would make the amount a hundred times too large. ",5", "1,,2", "1,.5"
// and any separator after the decimal one are refused too. More fraction digits than the scale is
// svc:validation/money_scale_mismatch, never rounded; zeros past the scale are not more precision
// and are dropped ("1000.00" of a scale-0 asset is 1000). units minor: an integer (sign,
// parentheses and group separators as above, no decimal separator). At most 38 digits of minor
// units after leading zeros are dropped.
// A malformed amount is svc:validation/schema.
//
// In JSONL, a JSON number is an amount only when it is an integer in the safe range: a fraction
// has already been through a float when the line was parsed, so it cannot be read exactly and is
// refused (quote it in the file).

const MONEY_SCALE: ErrorCode = 'svc:validation/money_scale_mismatch';
const MAX_MINOR_DIGITS = 38;

export interface AmountOptions {
  units?: 'decimal' | 'minor' | undefined;
  scale: number;
  decimalSeparator?: string | undefined;
  groupSeparator?: string | undefined;
}

const DIGITS = /^\d+$/;

// Amount text to integer minor units at `scale`, as text ("-123456").
export function parseAmount(text: string, options: AmountOptions): Result<string> {
  const decimal = options.decimalSeparator ?? '.';
  const group = options.groupSeparator;
  if (group !== undefined && group === decimal) return fail(SCHEMA, 'decimal_separator and group_separator are the same');
  let s = text.trim();
  let negative = false;
  let parenthesised = false;
  if (s.startsWith('(') && s.endsWith(')')) {
    parenthesised = true;
    negative = true;
    s = s.slice(1, -1).trim();
  }
  if (s.startsWith('+') || s.startsWith('-')) {
    if (parenthesised) return fail(SCHEMA, 'a sign inside an accounting negative (parentheses)');
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  // Scientific notation (as some exporters write large amounts: 1.916920493E7) in decimal units:
  // the exponent moves the decimal separator; nothing is rounded.
  let exponent = 0;
  const scientific = options.units !== 'minor' ? /^(.*\d)[eE]([+-]?\d{1,2})$/.exec(s) : null;
  if (scientific) {
    s = scientific[1]!;
    exponent = Number(scientific[2]);
  }
  const parts = s.split(decimal);
  if (parts.length > 2) return fail(SCHEMA, 'more than one decimal separator');
  const whole = parts[0]!;
  const fraction = parts[1];
  if (fraction !== undefined && options.units === 'minor') return fail(SCHEMA, 'minor units must be an integer (no decimal separator)');
  if (fraction !== undefined && !DIGITS.test(fraction) && fraction !== '') {
    return fail(SCHEMA, group !== undefined && fraction.includes(group) ? 'a group separator after the decimal separator' : 'not an amount');
  }
  let wholeDigits = whole;
  if (whole !== '') {
    const groups = group === undefined ? [whole] : whole.split(group);
    if (!groups.every((g) => DIGITS.test(g))) return fail(SCHEMA, 'not an amount');
    if (!wellGrouped(groups)) return fail(SCHEMA, 'digit groups of other sizes than 1,234,567 or 12,34,567 (a decimal comma read as a group separator?)');
    wholeDigits = groups.join('');
  }
  if (wholeDigits === '' && (fraction ?? '') === '') return fail(SCHEMA, 'not an amount');
  let fractionDigits = fraction ?? '';
  if (exponent !== 0) {
    const all = `${wholeDigits}${fractionDigits}`;
    const point = wholeDigits.length + exponent;
    const padded = point < 0 ? `${'0'.repeat(-point)}${all}` : all.padEnd(point, '0');
    const at = Math.max(point, 0);
    wholeDigits = padded.slice(0, at) || '0';
    fractionDigits = padded.slice(at);
  }
  // Zeros past the scale change nothing ("1000.00" of a scale-0 asset is exact); other digits
  // would need rounding, which amounts never get.
  if (fractionDigits.length > options.scale && /^0*$/.test(fractionDigits.slice(options.scale))) fractionDigits = fractionDigits.slice(0, options.scale);
  if (fractionDigits.length > options.scale) {
    return fail(MONEY_SCALE, `more fraction digits than the scale (${options.scale}) allows; amounts are never rounded`);
  }
  const digits = options.units === 'minor' ? wholeDigits : `${wholeDigits}${fractionDigits.padEnd(options.scale, '0')}`;
  const minor = digits.replace(/^0+(?=\d)/, '');
  if (minor.length > MAX_MINOR_DIGITS) return fail(SCHEMA, `more than ${MAX_MINOR_DIGITS} digits of minor units`);
  const value = BigInt(minor);
  return ok((negative ? -value : value).toString());
}

// The text of an amount: text as is, a safe JSON integer as its digits.
function amountText(value: unknown): Result<string> {
  if (typeof value === 'string') return ok(value);
  if (typeof value === 'number') {
    return Number.isSafeInteger(value)
      ? ok(String(value))
      : fail(SCHEMA, 'a JSON number amount with a fraction (or beyond the safe integer range) cannot be read exactly; write it as a string');
  }
  return fail(SCHEMA, `expected an amount as text, got ${Array.isArray(value) ? 'an array' : typeof value}`);
}

export type MoneyRule = Pick<FieldRule, 'value' | 'asset' | 'scale' | 'units' | 'decimal_separator' | 'group_separator' | 'optional' | 'default'>;

export interface MoneyContext {
  nullValues: ReadonlySet<string>;
  // The asset registry's scale of an asset code; undefined when the code is not registered.
  scaleOf: (asset: string) => number | undefined;
}

function error(code: ErrorCode, reason: string): FieldOutcome {
  return { kind: 'error', code, reason };
}

// A money target of a row. The value part decides presence: when it is absent (or empty) the
// rule's `default` applies (null: unset; an object: a whole Money literal, set as given; text or
// a number: an amount read with the asset part and the rule's units and separators), then
// `optional`, else the row is rejected. A present amount needs an asset. The scale is the rule's,
// or else the registry's for the asset (svc:validation/money_scale_mismatch when it has none).
// Rule-level from/const/trim/case/map do not apply to money: the parts carry their own.
export function evaluateMoney(rule: MoneyRule, row: SourceRow, ctx: MoneyContext): FieldOutcome {
  const value = sourceValue(rule.value ?? {}, row, ctx.nullValues);
  if (!value.ok) return error(value.code, `value: ${value.reason}`);
  let amount = value.value;
  if (amount === undefined) {
    if (rule.default === null) return { kind: 'unset' };
    if (rule.default !== undefined) {
      if (typeof rule.default === 'object' && !Array.isArray(rule.default)) return { kind: 'value', value: structuredClone(rule.default) };
      amount = rule.default;
    } else if (rule.optional) {
      return { kind: 'unset' };
    } else {
      return error(SCHEMA, 'no value');
    }
  }
  const text = amountText(amount);
  if (!text.ok) return error(text.code, text.reason);

  const asset = sourceValue(rule.asset ?? {}, row, ctx.nullValues);
  if (!asset.ok) return error(asset.code, `asset: ${asset.reason}`);
  if (asset.value === undefined) return error(SCHEMA, 'no asset');
  if (typeof asset.value !== 'string' && typeof asset.value !== 'number') return error(SCHEMA, 'asset is not text');
  const code = String(asset.value);
  // What live ingest says of a malformed code whatever the scale: no registry holds one.
  if (!ASSET_CODE.test(code)) return error(SCHEMA, 'asset: must be a 3-letter upper-case code or X- followed by 2-10 upper-case letters or digits');

  const scale = rule.scale ?? ctx.scaleOf(code);
  if (scale === undefined) return error(MONEY_SCALE, 'the mapping gives no scale and the asset is not in the asset registry');

  const minor = parseAmount(text.value, {
    units: rule.units,
    scale,
    decimalSeparator: rule.decimal_separator,
    groupSeparator: rule.group_separator,
  });
  if (!minor.ok) return error(minor.code, minor.reason);
  const money: Money = { value: minor.value, asset: code, scale };
  return { kind: 'value', value: money };
}

// Groups of the whole part as written between group separators: one group alone, or the last of
// three digits with those before it of three (the first 1-3) or of two (the first 1-2, Indian).
function wellGrouped(groups: readonly string[]): boolean {
  if (groups.length === 1) return true;
  const [first, ...rest] = groups;
  const last = rest.pop()!;
  if (last.length !== 3) return false;
  if (rest.every((g) => g.length === 3) && first!.length >= 1 && first!.length <= 3) return true;
  return rest.length > 0 && rest.every((g) => g.length === 2) && first!.length >= 1 && first!.length <= 2;
}
