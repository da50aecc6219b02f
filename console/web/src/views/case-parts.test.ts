import { describe, expect, it } from 'vitest';
import { outcomeText } from './case-assign.ts';
import { ageText, amountText, shortCaseId } from './case-parts.ts';

describe('ageText', () => {
  // The two largest units, floored: what an analyst reads at a glance.
  it.each([
    [0, '0m'],
    [59, '0m'],
    [60, '1m'],
    [3_599, '59m'],
    [3_600, '1h 0m'],
    [5 * 3_600 + 12 * 60 + 59, '5h 12m'],
    [86_399, '23h 59m'],
    [86_400, '1d 0h'],
    [3 * 86_400 + 4 * 3_600 + 59 * 60, '3d 4h'],
    [400 * 86_400, '400d 0h'],
    [-5, '0m'],
  ])('%i seconds is %s', (seconds, text) => expect(ageText(seconds)).toBe(text));
});

describe('case pieces', () => {
  it('shortens a case id to the last 8 hex digits of its uuid', () => {
    expect(shortCaseId('epsd_01a0860a-0a00-7084-b355-76f101bf15ba')).toBe('01bf15ba');
    // Two cases opened within the same minute differ here, not in their time prefix.
    expect(shortCaseId('epsd_01a0860a-0a01-7f00-8123-0000000000aa')).not.toBe(shortCaseId('epsd_01a0860a-0a02-7e00-9456-0000000000bb'));
  });

  it('formats the amount at stake by the scale the API sends, exactly', () => {
    expect(amountText({ value: '900719925474099312345', asset: 'USD', scale: 2 })).toBe('9,007,199,254,740,993,123.45 USD');
    expect(amountText({ value: '1500', asset: 'JPY', scale: 0 })).toBe('1,500 JPY');
    expect(amountText(null)).toBe('—');
  });

  it('counts the outcomes of a bulk assignment', () => {
    const user = { user_id: '00000000-0000-4000-8000-000000000001', email: 'ana@example.com' };
    const results = [
      { episode_id: 'epsd_a', outcome: 'assigned' as const, assignee: user },
      { episode_id: 'epsd_b', outcome: 'unchanged' as const, assignee: user },
      { episode_id: 'epsd_c', outcome: 'assigned' as const, assignee: user },
      { episode_id: 'epsd_d', outcome: 'not_found' as const, assignee: null },
    ];
    expect(outcomeText({ results })).toBe('2 assigned · 1 unchanged · 1 not found');
  });
});
