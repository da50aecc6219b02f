import { describe, expect, it } from 'vitest';
import { isoRegistry, registryWith } from '../assets/registry.ts';
import { checkMoneyScale, moneySchema, type Money } from './money.ts';
import {
  SCALE, SCHEMA, check, checkWith, expectAccepted, expectRefused, findings, onData, one,
} from '../validation/test-kit.ts';

// Money: value is a string of signed integer minor units (JSON number refused, decimal point
// refused, more precision than the asset has refused, never rounded); asset is a 3-letter
// upper-case code or X- followed by 2-10 upper-case letters or digits; scale must match the
// asset registry (svc:validation/money_scale_mismatch); a money value without scale is refused.
const usd = (value: unknown = '12550', scale: unknown = 2, asset: unknown = 'USD') => ({ value, asset, scale });
// One minor unit, well formed: the registry check takes money that passed the shape check.
const minorOne = (scale: number, asset: string): Money => ({ value: '1', asset, scale });
const withUsdc = registryWith(new Map([['X-USDC', 6]]));

describe('moneySchema (shape)', () => {
  it.each(['0', '1', '-1', '12550', '-12550', '007', '123456789012345678901234567890'])('accepts value %j', (value) =>
    expect(moneySchema.safeParse(usd(value)).success).toBe(true));
  it.each(one([12550, 125.5, 0, '10.50', '10.', '.5', '1e3', '1,000', '1 000', '', '-', '--1', ' 1', '1 ', '0x10', 'ten', null, true]))(
    'refuses value %j', (value) => {
      const parsed = moneySchema.safeParse(usd(value));
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['value']);
    });
  it('refuses a JSON number with a message that says so', () =>
    expect(moneySchema.safeParse(usd(12550)).error?.issues[0]?.message).toMatch(/not a JSON number/));

  it.each(['USD', 'JPY', 'X-AB', 'X-USDC', 'X-ABCDEFGHIJ', 'X-1234'])('accepts asset %j', (asset) =>
    expect(moneySchema.safeParse(usd('1', 2, asset)).success).toBe(true));
  it.each(one(['usd', 'US', 'USDT', 'X-A', 'X-ABCDEFGHIJK', 'X-usdc', 'X_USDC', 'x-USDC', '', 840, null]))('refuses asset %j', (asset) =>
    expect(moneySchema.safeParse(usd('1', 2, asset)).error?.issues.map((i) => i.path.join('.'))).toEqual(['asset']));

  it.each([0, 2, 3, 18])('accepts scale %j', (scale) => expect(moneySchema.safeParse(usd('1', scale)).success).toBe(true));
  it.each(one(['2', 2.5, -1, 19, null]))('refuses scale %j', (scale) =>
    expect(moneySchema.safeParse(usd('1', scale)).error?.issues.map((i) => i.path.join('.'))).toEqual(['scale']));

  it.each(['value', 'asset', 'scale'])('requires %s', (member) => {
    const money: Record<string, unknown> = usd();
    delete money[member];
    expect(moneySchema.safeParse(money).error?.issues.map((i) => i.path.join('.'))).toEqual([member]);
  });
  it('refuses an unknown member', () => expect(moneySchema.safeParse({ ...usd(), currency: 'USD' }).success).toBe(false));
});

describe('checkMoneyScale (registry)', () => {
  it.each([
    ['USD', 2], ['EUR', 2], ['JPY', 0], ['KRW', 0], ['KWD', 3], ['BHD', 3], ['CLF', 4],
  ] as const)('accepts %s with scale %d', (asset, scale) => expect(checkMoneyScale(minorOne(scale, asset), isoRegistry)).toBeUndefined());

  it.each([
    ['USD', 3], ['USD', 0], ['JPY', 2], ['KWD', 2], ['EUR', 18],
  ] as const)('refuses %s with scale %d at scale', (asset, scale) =>
    expect(checkMoneyScale(minorOne(scale, asset), isoRegistry)?.field).toBe('scale'));

  it('refuses an asset the registry does not know, at asset', () => {
    expect(checkMoneyScale(minorOne(6, 'X-USDC'), isoRegistry)?.field).toBe('asset');
    expect(checkMoneyScale(minorOne(2, 'ZZZ'), isoRegistry)?.field).toBe('asset');
    expect(checkMoneyScale(minorOne(2, 'XAU'), isoRegistry)?.field).toBe('asset');
  });

  it('accepts a registered X- asset at its registered scale only', () => {
    expect(checkMoneyScale(minorOne(6, 'X-USDC'), withUsdc)).toBeUndefined();
    expect(checkMoneyScale(minorOne(2, 'X-USDC'), withUsdc)?.field).toBe('scale');
    expect(checkMoneyScale(minorOne(6, 'X-USDT'), withUsdc)?.field).toBe('asset');
    expect(checkMoneyScale(minorOne(2, 'USD'), withUsdc)).toBeUndefined();
  });

  it('never lets a registered asset override an ISO scale', () =>
    expect(checkMoneyScale(minorOne(6, 'USD'), registryWith(new Map([['USD', 6]])))?.field).toBe('scale'));
});

// Through the live validation: every Money member of every family, at its exact path.
describe('money in an item', () => {
  const MONEY_MEMBERS = [
    ['movement', 'amount'],
    ['movement', 'fees.0'],
    ['party', 'expected_profile.declared_monthly_volume'],
    ['control_event', 'amount'],
  ] as const;

  describe.each(MONEY_MEMBERS)('%s data.%s', (family, member) => {
    const at = (value: unknown) => onData(member, value);
    const path = `event.data.${member}`;

    it('accepts USD at scale 2, JPY at 0, KWD at 3, negative values', () => {
      expectAccepted(check(family, at(usd('-100'))));
      expectAccepted(check(family, at(usd('1000', 0, 'JPY'))));
      expectAccepted(check(family, at(usd('1000', 3, 'KWD'))));
    });
    it('refuses a JSON number value as a schema error', () => expectRefused(check(family, at(usd(12550))), SCHEMA, `${path}.value`));
    it('refuses a decimal string value', () => expectRefused(check(family, at(usd('10.50'))), SCHEMA, `${path}.value`));
    it('refuses a missing scale as a schema error', () => expectRefused(check(family, at({ value: '1', asset: 'USD' })), SCHEMA, `${path}.scale`));
    it('refuses a missing value', () => expectRefused(check(family, at({ asset: 'USD', scale: 2 })), SCHEMA, `${path}.value`));
    it('refuses a missing asset', () => expectRefused(check(family, at({ value: '1', scale: 2 })), SCHEMA, `${path}.asset`));
    it('refuses a malformed asset as a schema error', () => expectRefused(check(family, at(usd('1', 2, 'usd'))), SCHEMA, `${path}.asset`));
    it('refuses USD at scale 3 (more precision than the asset has)', () =>
      expectRefused(check(family, at(usd('12550', 3))), SCALE, `${path}.scale`));
    it('refuses JPY at scale 2 and KWD at scale 2', () => {
      expectRefused(check(family, at(usd('1', 2, 'JPY'))), SCALE, `${path}.scale`);
      expectRefused(check(family, at(usd('1', 2, 'KWD'))), SCALE, `${path}.scale`);
    });
    it('refuses an X- asset the tenant has not registered, at asset', () =>
      expectRefused(check(family, at(usd('1', 6, 'X-USDC'))), SCALE, `${path}.asset`));
    it('accepts a registered X- asset at its scale only', () => {
      expectAccepted(checkWith({ registry: withUsdc }, family, at(usd('1', 6, 'X-USDC'))));
      expectRefused(checkWith({ registry: withUsdc }, family, at(usd('1', 2, 'X-USDC'))), SCALE, `${path}.scale`);
    });
    it('refuses an ISO-shaped code outside the registry, at asset', () =>
      expectRefused(check(family, at(usd('1', 2, 'ZZZ'))), SCALE, `${path}.asset`));
    it('does not check the registry for a malformed money value', () =>
      expect(findings(check(family, at(usd('1.5', 3))))).toEqual([[SCHEMA, `${path}.value`]]));
  });

  it('keeps the value verbatim (no rounding, no number conversion)', () => {
    const result = check('movement', onData('amount', usd('-90071992547409931234')));
    expectAccepted(result);
    if (result.ok) expect(result.event.data).toHaveProperty('amount', usd('-90071992547409931234'));
  });
});
