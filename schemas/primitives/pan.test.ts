import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containsPan, findPans, luhnValid } from './pan.ts';
import { registryWith } from '../assets/registry.ts';
import { validateItem } from '../validation/validate-item.ts';
import { CTX, PAN, SCHEMA, check, checkWith, expectAccepted, expectRefused, findings, itemOf, onData, onEvent } from '../validation/test-kit.ts';

const CARD = '4111111111111111';

describe('luhnValid', () => {
  it.each(['4111111111111111', '5555555555554444', '378282246310005', '4222222222222', '6011000990139424009', '79927398713', '0'])(
    'accepts %s', (digits) => expect(luhnValid(digits)).toBe(true));
  it.each(['4111111111111112', '5555555555554445', '79927398710', '1234567812345678'])('refuses %s', (digits) =>
    expect(luhnValid(digits)).toBe(false));
});

describe('containsPan', () => {
  it.each([
    ['a bare 16-digit Visa test number', CARD],
    ['Mastercard', '5555555555554444'],
    ['15-digit Amex', '378282246310005'],
    ['13 digits (minimum)', '4222222222222'],
    ['19 digits (maximum)', '6011000990139424009'],
    ['groups of four with spaces', '4111 1111 1111 1111'],
    ['groups of four with dashes', '4111-1111-1111-1111'],
    ['Amex grouping 4-6-5', '3782 822463 10005'],
    ['mixed separators', '4111 1111-1111 1111'],
    ['inside text', 'card 4111 1111 1111 1111 thanks'],
    ['glued to letters', 'card:4111111111111111;'],
    ['followed by another group', '4111 1111 1111 1111 1234'],
    ['preceded by another group', '12 4111 1111 1111 1111'],
    ['on a second line', 'line one\n4111111111111111'],
    ['after other numbers', 'order 12345, card 4111-1111-1111-1111'],
    ['groups split by dots', '4111.1111.1111.1111'],
    ['groups split by slashes', '4111/1111/1111/1111'],
    ['groups split by underscores', '4111_1111_1111_1111'],
    ['groups split by two spaces', '4111  1111  1111  1111'],
    ['groups split by tabs', '4111\t1111\t1111\t1111'],
    ['groups split by no-break spaces', '4111\u00a01111\u00a01111\u00a01111'],
    ['full-width digits', '\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11'],
    ['a space and a dash together', '4111 - 1111 - 1111 - 1111'],
  ])('flags %s', (_name, text) => expect(containsPan(text)).toBe(true));

  it.each([
    ['a non-Luhn 16-digit number', '4111111111111112'],
    ['a non-Luhn grouped number', '4111 1111 1111 1112'],
    ['12 digits, Luhn-valid', '411111111117'],
    ['a 22-digit number that is Luhn-valid and starts with a card number', '4111111111111111000000'],
    ['a 22-digit Luhn-valid number', '4123456789012345678908'],
    ['a 21-digit Luhn-valid number', '123456789012345678906'],
    ['an IBAN', 'DE89370400440532013000'],
    ['a masked card', '411111******1111'],
    ['a date-time', '2026-09-01T11:59:00Z'],
    ['a phone number', '+44 20 7946 0958'],
    ['digits split by other characters', '4111:1111:1111:1111'],
    ['groups split by more than three separators', '4111    1111    1111    1111'],
    ['a decimal number whose digits together pass Luhn', '41111.11111111111'],
    ['a time whose seconds, fraction and offset together pass Luhn', '2026-09-01T12:00:58.999999999-23:59'],
    ['a dotted number of two groups and a dash, whose first two pass Luhn', '4111.111111119-111'],
    ['an IPv4 address', '192.168.100.200'],
    ['few digits', 'order 1234'],
    ['no digits', 'dinner'],
    ['empty', ''],
  ])('does not flag %s', (_name, text) => expect(containsPan(text)).toBe(false));

  it('answers as the digit-group pattern alone would, whatever its shortcut skips', () => {
    // The rule without the shortcut: any consecutive groups of one run, 13-19 digits, Luhn-valid.
    const byPattern = (text: string) =>
      [...text.matchAll(/\d+(?:[ \t\-/_.]{1,3}\d+)*/g)].some(([match]) =>
        // Dots join only a run of single dots and three groups or more; elsewhere they split it.
        (!match.includes('.') || /^\d+(\.\d+){2,}$/.test(match) ? [match] : match.split('.')).some((run) => {
          const groups = run.split(/[ \t\-/_.]+/);
          return groups.some((_, start) => {
            let digits = '';
            return groups.slice(start).some((group) => (digits += group).length >= 13 && digits.length <= 19 && luhnValid(digits));
          });
        }),
      );
    const pieces = fc.constantFrom('4111', '1111', '5555', '4444', '0', '12', ' ', '-', '--', ' -', '.', '/', '  -_', 'x', ':', '4111111111111111');
    fc.assert(fc.property(fc.array(pieces, { maxLength: 14 }).map((p) => p.join('')), (text) => containsPan(text) === byPattern(text)), { numRuns: 3000 });
  });
});

describe('findPans', () => {
  it('returns the path of every string holding a PAN, with numeric array indices', () => {
    expect(findPans({ a: CARD, b: ['x', `card ${CARD}`], c: { d: { e: '4111-1111-1111-1111' } }, f: 4111111111111111, g: null })).toEqual([
      ['a'], ['b', '1'], ['c', 'd', 'e'],
    ]);
  });
  it('inspects a top-level string', () => expect(findPans(CARD)).toEqual([[]]));
  it('finds nothing in clean values', () => expect(findPans({ a: 'x', b: [1, true, null], c: {} })).toEqual([]));
  it("skips a money object's integer value, and only that", () => {
    const amount = { value: CARD, asset: 'USD', scale: 2 };
    const spaced = { value: '4111 1111 1111 1111', asset: 'USD', scale: 2 };
    const value = { amount, spaced, other: { value: CARD } };
    expect(findPans(value, [], new Set([amount, spaced]))).toEqual([['spaced', 'value'], ['other', 'value']]);
    expect(findPans(value)).toEqual([['amount', 'value'], ['spaced', 'value'], ['other', 'value']]);
  });
});

// Luhn-valid runs of 13-19 digits that are amounts (decision 0060).
describe('a money value of minor units is a quantity, not a card number', () => {
  // 0.26 of an 18-decimal token; 10,000,000,000.09 rupiah.
  const TOKEN = { value: '260000000000000000', asset: 'X-ETH', scale: 18 };
  const RUPIAH = { value: '1000000000009', asset: 'IDR', scale: 2 };
  const registry = registryWith(new Map([['X-ETH', 18]]));

  it('the amounts pass the card check, so only their place spares them', () => {
    expect(containsPan(TOKEN.value)).toBe(true);
    expect(containsPan(RUPIAH.value)).toBe(true);
    expect(containsPan(`-${CARD}`)).toBe(true);
  });

  it.each([
    ['movement amount', 'movement', onData('amount', TOKEN)],
    ['movement amount, negative', 'movement', onData('amount', { ...RUPIAH, value: `-${RUPIAH.value}` })],
    ['movement fee', 'movement', onData('fees.0', RUPIAH)],
    ['control event amount', 'control_event', onData('amount', TOKEN)],
    ['party declared monthly volume', 'party', onData('expected_profile.declared_monthly_volume', RUPIAH)],
  ] as const)('is accepted in a %s', (_name, family, mutate) => expectAccepted(checkWith({ registry }, family, mutate)));

  it('a card number written with separators in a money value is still refused there', () => {
    const result = check('movement', onData('amount.value', '4111 1111 1111 1111'));
    expect(result.ok ? undefined : result.code).toBe(PAN);
    expect(findings(result)).toEqual([[PAN, 'event.data.amount.value'], [SCHEMA, 'event.data.amount.value']]);
  });

  it('a member named value outside money is still scanned', () =>
    expectRefused(check('party', onData('identifiers.0.value', CARD)), PAN, 'event.data.identifiers.0.value'));
});

describe('PAN in an item', () => {
  it.each([
    ['movement memo', 'movement', onData('memo', `thanks for dinner ${CARD}`), 'event.data.memo'],
    ['movement memo, spaced', 'movement', onData('memo', 'card 4111 1111 1111 1111 thanks'), 'event.data.memo'],
    ['movement memo, dashed', 'movement', onData('memo', '4111-1111-1111-1111'), 'event.data.memo'],
    ['envelope external_id', 'movement', onEvent('external_id', CARD), 'event.external_id'],
    ['nested counterparty', 'movement', onData('credit.counterparty.name_as_given', CARD), 'event.data.credit.counterparty.name_as_given'],
    ['party legal_names[0]', 'party', onData('legal_names.0', CARD), 'event.data.legal_names.0'],
    ['party identifiers[0].value', 'party', onData('identifiers.0.value', CARD), 'event.data.identifiers.0.value'],
    ['instrument masked_identifier', 'instrument', onData('masked_identifier', CARD), 'event.data.masked_identifier'],
    ['control event subject', 'control_event', onData('subject.external_id', CARD), 'event.data.subject.external_id'],
  ] as const)('is refused in %s, at that path', (_name, family, mutate, path) => expectRefused(check(family, mutate), PAN, path));

  it('is reported once per field, at each field', () => {
    const result = check('movement', onData('memo', CARD), onData('debit.party_id', CARD), onEvent('external_id', CARD));
    expect(result.ok ? undefined : result.code).toBe(PAN);
    expect(findings(result).sort()).toEqual([[PAN, 'event.data.debit.party_id'], [PAN, 'event.data.memo'], [PAN, 'event.external_id']]);
  });

  it('is refused in an unknown member too, next to the unknown-member finding', () => {
    const result = check('movement', onData('note', CARD));
    expect(result.ok ? undefined : result.code).toBe(PAN);
    expect(findings(result)).toEqual([[PAN, 'event.data.note'], [SCHEMA, 'event.data.note']]);
  });

  it('is reported under the batch prefix', () =>
    expectRefused(validateItem(itemOf('movement', onData('memo', CARD)), CTX, ['events', '7']), PAN, 'events.7.event.data.memo'));

  it('does not refuse non-card numbers', () => {
    expectAccepted(check('movement', onData('memo', 'ref 4111111111111112')));
    expectAccepted(check('movement', onData('memo', 'acct 4111111111111111000000')));
    expectAccepted(check('movement', onData('memo', 'iban DE89370400440532013000')));
    expectAccepted(check('instrument', onData('masked_identifier', '411111******1111')));
  });

  it('never echoes the card number in the result', () => {
    for (const card of [CARD, '4111 1111 1111 1111', '4111-1111-1111-1111']) {
      const results = [
        check('movement', onData('memo', `card ${card}`)),
        check('movement', onData('memo', card), onData('type', 'nope')),
        check('instrument', onData('country', card)),
        check('relationship', onData('from.kind', card)),
        check('movement', onEvent('external_id', card)),
        check('movement', onData(card, 'x')),
        check('movement', onEvent(card, 'x')),
      ];
      for (const result of results) {
        expect(result.ok).toBe(false);
        const text = JSON.stringify(result);
        expect(text).not.toContain(card);
        expect(text).not.toContain('4111');
      }
    }
  });
});

describe('a card number as a member name', () => {
  it('is pan_detected at the path of its object, never an unknown-member error that repeats it', () => {
    const result = check('movement', onData(CARD, 'x'));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe(PAN);
    expect(result.errors).toEqual([{ path: 'event.data', code: PAN, message: expect.any(String) }]);
  });
});
