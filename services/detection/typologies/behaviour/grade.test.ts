import { describe, expect, it } from 'vitest';
import { grade } from './grade.ts';
import { formatMoney } from '../../framework/money-text.ts';
import { ratio } from './money.ts';

describe('grade', () => {
  it('maps the excess over a threshold to severity bands, with scores inside them', () => {
    expect(grade(1)).toEqual({ severity: 'medium', score: 0.5 });
    expect(grade(2.9).severity).toBe('medium');
    expect(grade(3)).toEqual({ severity: 'high', score: 0.7 });
    expect(grade(10)).toEqual({ severity: 'critical', score: 0.9 });
    expect(grade(Number.POSITIVE_INFINITY)).toEqual({ severity: 'critical', score: 0.99 });
    expect(grade(2).score).toBeGreaterThan(grade(1.5).score);
  });

  it('lowers weak signals and raises corroborated ones, never to critical', () => {
    expect(grade(1, { weak: true })).toEqual({ severity: 'low', score: 0.3 });
    expect(grade(5, { weak: true }).severity).toBe('medium');
    expect(grade(1, { corroborating: 1 }).severity).toBe('high');
    expect(grade(5, { corroborating: 2 }).severity).toBe('high');
    expect(grade(20, { corroborating: 1 }).severity).toBe('critical');
  });
});

describe('money', () => {
  it('formats base minor units with the asset scale and divides safely', () => {
    expect(formatMoney(123456789n, 'USD')).toBe('1,234,567.89 USD');
    expect(formatMoney(5n, 'USD')).toBe('0.05 USD');
    expect(formatMoney(1500n, 'JPY')).toBe('1,500 JPY');
    expect(formatMoney(7n, 'X-PTS')).toBe('7 minor units of X-PTS');
    expect(ratio(3n, 0n)).toBe(Number.POSITIVE_INFINITY);
    expect(ratio(0n, 0n)).toBe(0);
  });
});
