// Evidence pieces every network detector builds the same way: keys, windows, capped lists and
// money as decimal strings of base minor units.
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { moneyParameter } from '../../framework/money-params.ts';

// Evidence lists are capped so an alert on a hub with thousands of movements stays readable.
const MAX_LISTED = 50;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

// Money parameters are decimal strings of base minor units, their defaults in USD cents
// (framework/money-params.ts).
export const moneyParam = moneyParameter;

export const accountKey = (account: string) => `account:${account}`;

// The account a counterparty key names, or null for parties and external counterparties.
export function accountOfKey(key: string | null): string | null {
  return key !== null && key.startsWith('account:') ? key.slice('account:'.length) : null;
}

export interface Span {
  from: Date;
  to: Date;
}

// The window (from, at] ending at the evaluation instant.
export function spanOfDays(ctx: SubjectContext, days: number): Span {
  return { from: new Date(ctx.at.getTime() - days * DAY_MS), to: ctx.at };
}

export function spanOfHours(ctx: SubjectContext, hours: number): Span {
  return { from: new Date(ctx.at.getTime() - hours * HOUR_MS), to: ctx.at };
}

// Graph reads take `since` inclusively; evidence windows exclude their start, so the graph is
// asked from one millisecond later and both agree on what is inside.
export const graphSince = (span: Span) => new Date(span.from.getTime() + 1);

export const windowOf = (span: Span) => ({ from: span.from.toISOString(), to: span.to.toISOString() });

export function sumOf(records: readonly ActivityRecord[]): bigint {
  return records.reduce((sum, record) => sum + (record.baseValue ?? 0n), 0n);
}

// Largest first (priced before unpriced), then latest first: what an analyst checks first.
export function byRelevance(a: ActivityRecord, b: ActivityRecord): number {
  const x = a.baseValue ?? -1n;
  const y = b.baseValue ?? -1n;
  if (x !== y) return x > y ? -1 : 1;
  return b.occurredAt.getTime() - a.occurredAt.getTime();
}

// Distinct, in order, at most MAX_LISTED.
export function listed(values: Iterable<string>): string[] {
  const out: string[] = [];
  for (const value of new Set(values)) {
    if (out.length >= MAX_LISTED) break;
    out.push(value);
  }
  return out;
}

export const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;

// Ratios for evidence: enough precision to check, no float noise.
export const ratio = (value: number) => Math.round(value * 1000) / 1000;

// a / b as a number, for ratios of money (never used to compute money itself).
export function moneyRatio(a: bigint, b: bigint): number {
  if (b === 0n) return a === 0n ? 0 : Number.POSITIVE_INFINITY;
  // Scaled in integers first, so large sums do not lose the ratio's precision.
  return Number((a * 1_000_000n) / b) / 1_000_000;
}
