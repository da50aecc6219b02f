import { describe, expect, it } from 'vitest';
import type { MovementChange } from '../../schemas/bus/canonical-change.ts';
import { COALESCE_SPAN_MS, subjectsOf } from './subjects.ts';

const T0 = Date.parse('2026-02-17T07:00:00Z');
const MINUTE = 60_000;

function movement(id: string, at: number, from: string, to: string, status = 'completed'): MovementChange {
  return {
    tenant_id: 'acme',
    event_id: `e-${id}`,
    external_id: id,
    occurred_at: new Date(at).toISOString(),
    received_at: new Date(at).toISOString(),
    object: 'movement',
    type: 'p2p',
    status,
    amount: { value: '100', asset: 'USD', scale: 2 },
    base_amount: { value: '100', asset: 'USD', scale: 2 },
    debit: { account_id: `A-${from}`, party_id: `P-${from}`, country: null },
    credit: { account_id: `A-${to}`, party_id: `P-${to}`, country: null },
    data: {},
  };
}

// The instants one subject is evaluated at, in order.
const instantsOf = (work: ReturnType<typeof subjectsOf>, kind: string, id: string) =>
  work.filter((w) => w.subject.kind === kind && w.subject.id === id).map((w) => w.at.toISOString()).sort();

describe('subjectsOf', () => {
  it('touches both accounts and both parties of a movement that moved money, and nothing for a failed one', () => {
    const work = subjectsOf([movement('m1', T0, 'x', 'y'), movement('m2', T0, 'u', 'v', 'failed')]);
    expect(work.map((w) => `${w.subject.kind}:${w.subject.id}`).sort()).toEqual(['account:A-x', 'account:A-y', 'party:P-x', 'party:P-y']);
    expect(work.every((w) => w.trigger === 'movement' && w.at.getTime() === T0)).toBe(true);
  });

  it('evaluates touches within the span once, at the latest, with the change of that touch', () => {
    const work = subjectsOf([movement('m2', T0 + 20 * MINUTE, 'x', 'y'), movement('m1', T0, 'x', 'z'), movement('m3', T0 + 15 * MINUTE, 'x', 'y')]);
    expect(instantsOf(work, 'account', 'A-x')).toEqual([new Date(T0 + 20 * MINUTE).toISOString()]);
    expect(work.find((w) => w.subject.id === 'A-x')!.change).toMatchObject({ external_id: 'm2' });
  });

  it('keeps touches far apart in event time apart: a burst in February is judged in February, not from April', () => {
    const april = T0 + 54 * 24 * 60 * MINUTE;
    const burst = [0, 4, 15].map((m, i) => movement(`b${i}`, T0 + m * MINUTE, 'x', 'y'));
    const work = subjectsOf([...burst, movement('later', april, 'x', 'w')]);
    expect(instantsOf(work, 'account', 'A-x')).toEqual([new Date(T0 + 15 * MINUTE).toISOString(), new Date(april).toISOString()]);
    // The counterparty touched only by the burst: one evaluation.
    expect(instantsOf(work, 'account', 'A-y')).toEqual([new Date(T0 + 15 * MINUTE).toISOString()]);
  });

  it('starts a new run once a touch lies more than the span after the run began', () => {
    const ats = [0, 40, 59, 61, 100, 125].map((m) => T0 + m * MINUTE);
    const work = subjectsOf(ats.map((at, i) => movement(`m${i}`, at, 'x', `c${i}`)));
    expect(COALESCE_SPAN_MS).toBe(60 * MINUTE);
    // Runs: [0, 40, 59] (61 is past 0 + 60), [61, 100] (125 is past 61 + 60), [125].
    expect(instantsOf(work, 'account', 'A-x')).toEqual([59, 100, 125].map((m) => new Date(T0 + m * MINUTE).toISOString()));
  });

  it('starts a new run at a touch exactly the span after the run began, which a 1 h window at it would not hold', () => {
    const work = subjectsOf([0, 60].map((m, i) => movement(`m${i}`, T0 + m * MINUTE, 'x', `c${i}`)));
    expect(instantsOf(work, 'account', 'A-x')).toEqual([0, 60].map((m) => new Date(T0 + m * MINUTE).toISOString()));
  });
});
