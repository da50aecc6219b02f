import { describe, expect, it } from 'vitest';
import type { MovementChange } from '../../schemas/bus/canonical-change.ts';
import { activitiesOf, retractionOf } from './activities.ts';

function change(overrides: Partial<MovementChange> = {}): MovementChange {
  return {
    tenant_id: 'acme',
    event_id: '6f1c2a52-53a4-4a5b-9d55-0c8a7f1f2e01',
    external_id: 'mv-1',
    occurred_at: '2026-08-20T10:00:00Z',
    received_at: '2026-08-20T10:00:01Z',
    object: 'movement',
    type: 'p2p',
    status: 'completed',
    amount: { value: '12550', asset: 'EUR', scale: 2 },
    base_amount: { value: '13586', asset: 'USD', scale: 2 },
    debit: { account_id: 'A1', party_id: 'P1', country: 'GB' },
    credit: { account_id: 'A2', party_id: 'P2', country: 'NG' },
    data: {},
    ...overrides,
  };
}

describe('activitiesOf', () => {
  it('gives each account and party of a movement its side of it, with the other side as counterparty', () => {
    const activities = activitiesOf(change());
    const common = {
      movementId: 'mv-1',
      eventId: '6f1c2a52-53a4-4a5b-9d55-0c8a7f1f2e01',
      occurredAt: new Date('2026-08-20T10:00:00Z'),
      amount: { value: 12550n, scale: 2, asset: 'EUR' },
      baseValue: 13586n,
      cash: false,
      corridor: 'GB>NG',
    };
    expect(activities).toEqual([
      { ...common, subject: { tenantId: 'acme', kind: 'account', id: 'A1' }, direction: 'out', counterparty: 'account:A2', counterpartyCountry: 'NG' },
      { ...common, subject: { tenantId: 'acme', kind: 'party', id: 'P1' }, direction: 'out', counterparty: 'party:P2', counterpartyCountry: 'NG' },
      { ...common, subject: { tenantId: 'acme', kind: 'account', id: 'A2' }, direction: 'in', counterparty: 'account:A1', counterpartyCountry: 'GB' },
      { ...common, subject: { tenantId: 'acme', kind: 'party', id: 'P2' }, direction: 'in', counterparty: 'party:P1', counterpartyCountry: 'GB' },
    ]);
  });

  it('counts completed and pending movements, never failed or reversed ones', () => {
    expect(activitiesOf(change({ status: 'pending' }))).toHaveLength(4);
    expect(activitiesOf(change({ status: 'failed' }))).toEqual([]);
    expect(activitiesOf(change({ status: 'reversed' }))).toEqual([]);
  });

  it('gives a party moving money between its own accounts both an out and an in activity, with no counterparty', () => {
    const own = activitiesOf(change({ debit: { account_id: 'A1', party_id: 'P1', country: 'GB' }, credit: { account_id: 'A3', party_id: 'P1', country: 'GB' } }));
    const party = own.filter((a) => a.subject.kind === 'party');
    expect(party.map((a) => [a.subject.id, a.direction, a.counterparty])).toEqual([
      ['P1', 'out', null],
      ['P1', 'in', null],
    ]);
    expect(own.filter((a) => a.subject.kind === 'account').map((a) => [a.subject.id, a.counterparty])).toEqual([
      ['A1', 'account:A3'],
      ['A3', 'account:A1'],
    ]);
  });

  it('falls back from the other account to its party, and the other way round', () => {
    const partyOnly = activitiesOf(change({ credit: { account_id: null, party_id: 'P2', country: null } }));
    expect(partyOnly.map((a) => [a.subject.kind, a.subject.id, a.counterparty])).toEqual([
      ['account', 'A1', 'party:P2'],
      ['party', 'P1', 'party:P2'],
      ['party', 'P2', 'party:P1'],
    ]);
    const accountOnly = activitiesOf(change({ debit: { account_id: 'A1', party_id: null, country: 'GB' } }));
    expect(accountOnly.map((a) => [a.subject.kind, a.subject.id, a.counterparty])).toEqual([
      ['account', 'A1', 'account:A2'],
      ['account', 'A2', 'account:A1'],
      ['party', 'P2', 'account:A1'],
    ]);
  });

  it('keys an outside counterparty by institution and instrument, else leaves it unknown', () => {
    const outside = (counterparty: Record<string, string> | undefined) =>
      activitiesOf(
        change({
          credit: { account_id: null, party_id: null, country: counterparty?.country ?? null },
          data: counterparty ? { credit: { counterparty } } : {},
        }),
      ).map((a) => [a.subject.kind, a.counterparty]);
    expect(outside({ institution: 'Bank Z', instrument_ref: 'iban-9', country: 'NG', name_as_given: 'Z. Ltd' })).toEqual([
      ['account', 'external:Bank Z/iban-9'],
      ['party', 'external:Bank Z/iban-9'],
    ]);
    expect(outside({ institution: 'Bank Z' })[0]).toEqual(['account', 'external:Bank Z/']);
    expect(outside({ instrument_ref: 'iban-9' })[0]).toEqual(['account', 'external:/iban-9']);
    expect(outside({ name_as_given: 'Someone', country: 'NG' })[0]).toEqual(['account', null]);
    expect(outside(undefined)[0]).toEqual(['account', null]);
  });

  it('takes the counterparty country from the other leg, and a corridor only when both countries are known', () => {
    const [debit, , credit] = activitiesOf(change({ debit: { account_id: 'A1', party_id: 'P1', country: null } }));
    expect(debit).toMatchObject({ counterpartyCountry: 'NG', corridor: null });
    expect(credit).toMatchObject({ counterpartyCountry: null, corridor: null });
  });

  it('marks cash by the cash flag or a cash type, and leaves an unpriced amount without a base value', () => {
    expect(activitiesOf(change({ data: { cash: true } }))[0]!.cash).toBe(true);
    expect(activitiesOf(change({ type: 'cash_in' }))[0]!.cash).toBe(true);
    expect(activitiesOf(change({ type: 'cash_out' }))[0]!.cash).toBe(true);
    expect(activitiesOf(change({ type: 'withdrawal', data: { cash: false } }))[0]!.cash).toBe(false);
    const unpriced = activitiesOf(change({ base_amount: null }))[0]!;
    expect(unpriced.baseValue).toBeNull();
    expect(unpriced.amount).toEqual({ value: 12550n, scale: 2, asset: 'EUR' });
  });

  it('keeps amounts beyond 2^53 exact', () => {
    const big = activitiesOf(change({ amount: { value: '123456789012345678901234567', asset: 'USD', scale: 2 }, base_amount: { value: '123456789012345678901234567', asset: 'USD', scale: 2 } }))[0]!;
    expect(big.amount.value).toBe(123456789012345678901234567n);
    expect(big.baseValue).toBe(123456789012345678901234567n);
  });

  it('gives nothing to a leg with neither account nor party', () => {
    const cashIn = activitiesOf(change({ type: 'cash_in', debit: { account_id: null, party_id: null, country: null } }));
    expect(cashIn.map((a) => [a.subject.kind, a.direction, a.counterparty, a.cash])).toEqual([
      ['account', 'in', null, true],
      ['party', 'in', null, true],
    ]);
  });
});

describe('retractionOf', () => {
  it('names the movement a correction supersedes, unless the correction itself failed', () => {
    const correction = (status: MovementChange['status']) => change({ external_id: 'mv-2', status, data: { links: { correction_of: 'mv-1' } } });
    expect(retractionOf(correction('completed'))).toEqual({ tenantId: 'acme', movementId: 'mv-1', by: 'mv-2' });
    // A correction saying the payment was reversed takes the original back and adds nothing.
    expect(retractionOf(correction('reversed'))).toEqual({ tenantId: 'acme', movementId: 'mv-1', by: 'mv-2' });
    expect(activitiesOf(correction('reversed'))).toEqual([]);
    expect(retractionOf(correction('failed'))).toBeNull();
  });

  it('is null for a movement that corrects nothing, or names itself', () => {
    expect(retractionOf(change())).toBeNull();
    expect(retractionOf(change({ data: { links: { reverses: 'mv-0', refunds: 'mv-0' } } }))).toBeNull();
    expect(retractionOf(change({ data: { links: { correction_of: 'mv-1' } } }))).toBeNull();
  });
});
