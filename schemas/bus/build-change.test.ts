import { describe, expect, it } from 'vitest';
import { baseAmountOf, controlEventChange, movementChange, movementLeg, subjectPartyOf, type ChangeHead } from './build-change.ts';

const head: ChangeHead = { tenant_id: 't1', event_id: 'e1', external_id: 'x1', occurred_at: '2026-03-01T10:00:00.000Z', received_at: '2026-03-01T10:00:01.000Z', historical: false };
const usd = { value: '12550', asset: 'USD', scale: 2 };
const eur = { value: '2000', asset: 'EUR', scale: 2 };

describe('the change record builder', () => {
  it('takes the party and country of a leg from the event first, then from its account', () => {
    const account = { holder_party_id: 'holder', jurisdiction: 'GB' };
    expect(movementLeg({ account_id: 'a1', party_id: 'p1', counterparty: { country: 'FR' } }, account)).toEqual({ account_id: 'a1', party_id: 'p1', country: 'FR' });
    expect(movementLeg({ account_id: 'a1' }, account)).toEqual({ account_id: 'a1', party_id: 'holder', country: 'GB' });
    expect(movementLeg({ party_id: 'p2', counterparty: { country: null } }, undefined)).toEqual({ account_id: null, party_id: 'p2', country: null });
    expect(movementLeg(undefined, undefined)).toEqual({ account_id: null, party_id: null, country: null });
  });

  it('states the base amount: the amount in the base asset, else its normalised amount, else none', () => {
    const converted = { value: '2165', asset: 'USD', scale: 2 };
    expect(baseAmountOf(usd, 'USD', undefined)).toBe(usd);
    expect(baseAmountOf(eur, 'USD', { status: 'normalized', amount: converted })).toBe(converted);
    expect(baseAmountOf(eur, 'USD', { status: 'unavailable' })).toBeNull();
    expect(baseAmountOf(eur, 'USD', null)).toBeNull();
  });

  it('finds the party of a control event: the subject party, the holder of the subject account, or none', () => {
    const holders: string[] = [];
    const holderOf = (account: string) => (holders.push(account), account === 'a1' ? 'p9' : null);
    expect(subjectPartyOf({ kind: 'party', external_id: 'p1' }, holderOf)).toBe('p1');
    expect(subjectPartyOf({ kind: 'account', external_id: 'a1' }, holderOf)).toBe('p9');
    expect(subjectPartyOf({ kind: 'account', external_id: 'a2' }, holderOf)).toBeNull();
    expect(subjectPartyOf({ kind: 'device', external_id: 'd1' }, holderOf)).toBeNull();
    expect(holders).toEqual(['a1', 'a2']);
  });

  it('lays out each record in the order it travels on the bus, data last', () => {
    const leg = { account_id: null, party_id: null, country: null };
    const movement = movementChange(head, { type: 'p2p', status: 'completed', amount: usd, base_amount: usd, debit: leg, credit: leg, data: { a: 1 } });
    expect(Object.keys(movement)).toEqual(['tenant_id', 'event_id', 'external_id', 'occurred_at', 'received_at', 'historical', 'object', 'type', 'status', 'amount', 'base_amount', 'debit', 'credit', 'data']);
    expect(movement).toMatchObject({ ...head, object: 'movement', type: 'p2p', data: { a: 1 } });
    const control = controlEventChange(head, { type: 'login', subject: { kind: 'party', external_id: 'p1' }, subject_party_id: 'p1', data: {} });
    expect(Object.keys(control)).toEqual(['tenant_id', 'event_id', 'external_id', 'occurred_at', 'received_at', 'historical', 'object', 'type', 'subject', 'subject_party_id', 'data']);
    expect(control).toMatchObject({ ...head, object: 'control_event', subject_party_id: 'p1' });
  });
});
