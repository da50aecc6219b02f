// Evidence of a behaviour hit: the listed activities give the movement ids, counterparties and
// (unless the detector has exact totals of its own, from window statistics) the amounts.
import type { ActivityRecord } from '../../../../platform/aggregates/port.ts';
import type { Evidence, ThresholdCrossed } from '../../framework/detector.ts';
import type { SubjectContext } from '../../framework/context.ts';
import { sumOf } from './money.ts';

const MAX_LISTED = 50;

export interface EvidenceInput {
  // Most relevant first; every one inside (from, to].
  records: readonly ActivityRecord[];
  from: Date;
  to: Date;
  thresholds: ThresholdCrossed[];
  // Most relevant first; default: the records' counterparties in order.
  counterparties?: readonly string[];
  // Exact totals when the records are only a listing (window statistics).
  amounts?: { total: bigint; count: number; in?: bigint; out?: bigint };
  baseline?: Evidence['baseline'];
  facts?: Record<string, unknown>;
}

export function evidenceOf(ctx: SubjectContext, input: EvidenceInput): Evidence {
  const inside = input.records.filter((r) => r.occurredAt > input.from && r.occurredAt <= input.to);
  const amounts = input.amounts ?? {
    total: sumOf(inside.map((r) => r.baseValue)),
    count: new Set(inside.map((r) => r.movementId)).size,
    in: sumOf(inside.filter((r) => r.direction === 'in').map((r) => r.baseValue)),
    out: sumOf(inside.filter((r) => r.direction === 'out').map((r) => r.baseValue)),
  };
  const counterparties = input.counterparties ?? inside.flatMap((r) => (r.counterparty ? [r.counterparty] : []));
  return {
    movements: firstDistinct(inside.map((r) => r.movementId)),
    counterparties: firstDistinct(counterparties),
    amounts: {
      total: amounts.total.toString(),
      count: amounts.count,
      asset: ctx.baseAsset,
      ...(amounts.in !== undefined ? { in: amounts.in.toString() } : {}),
      ...(amounts.out !== undefined ? { out: amounts.out.toString() } : {}),
    },
    window: { from: input.from.toISOString(), to: input.to.toISOString() },
    thresholds: input.thresholds,
    ...(input.baseline ? { baseline: input.baseline } : {}),
    ...(input.facts ? { facts: input.facts } : {}),
  };
}

function firstDistinct(values: readonly string[]): string[] {
  return [...new Set(values)].slice(0, MAX_LISTED);
}

// Largest base amount first (unpriced last), latest first among equals.
export function byAmount(a: ActivityRecord, b: ActivityRecord): number {
  const x = a.baseValue ?? -1n;
  const y = b.baseValue ?? -1n;
  if (x !== y) return x > y ? -1 : 1;
  return b.occurredAt.getTime() - a.occurredAt.getTime();
}

// One movement as an analyst reads it in facts.
export function movementFact(record: ActivityRecord) {
  return {
    movement: record.movementId,
    at: record.occurredAt.toISOString(),
    direction: record.direction,
    amount: record.baseValue?.toString() ?? null,
    cash: record.cash,
    counterparty: record.counterparty,
  };
}

// `1 movement`, `3 movements`.
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
