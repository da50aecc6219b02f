import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld, type MovementSpec } from '../../../../test/support/detection-world.ts';
import { splitTransfers } from './split_transfers.ts';

const AT = '2026-08-20T20:00:00Z';

describe('split_transfers', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  const pay = (id: string, from: [string, string], to: [string | null, string | null], value: number, at: string, extra?: Record<string, unknown>): MovementSpec =>
    ({ id, from, to, value, at, ...(extra ? { extra } : {}) });

  it('flags both ends of three small transfers between two customers within 24h', async () => {
    await world.party('sp-p1');
    await world.account('sp-a1', 'sp-p1');
    await world.party('sp-p2');
    await world.account('sp-a2', 'sp-p2');
    await world.movements([
      pay('sp-m1', ['sp-a1', 'sp-p1'], ['sp-a2', 'sp-p2'], 300, '2026-08-20T08:00:00Z'),
      pay('sp-m2', ['sp-a1', 'sp-p1'], ['sp-a2', 'sp-p2'], 500, '2026-08-20T09:00:00Z'),
      pay('sp-m3', ['sp-a1', 'sp-p1'], ['sp-a2', 'sp-p2'], 700, '2026-08-20T19:00:00Z'),
    ]);
    await world.settle();
    const payer = await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a1' }, AT);
    expect(payer).toMatchObject({
      outcome: 'hit',
      severity: 'medium',
      evidence: {
        movements: ['sp-m3', 'sp-m2', 'sp-m1'],
        counterparties: ['account:sp-a2'],
        amounts: { total: '1500', count: 3, out: '1500', in: '0' },
        thresholds: [{ name: 'movements_out_one_counterparty', threshold: 2, observed: 3 }],
        window: { from: '2026-08-19T20:00:00.000Z', to: AT.replace('Z', '.000Z') },
      },
    });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a2' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { counterparties: ['account:sp-a1'], thresholds: [{ name: 'movements_in_one_counterparty', observed: 3 }] },
    });
    // Before the third transfer, two are enough at the default (issue 32, docs/decisions/0026), not
    // at three; before the second, one is ordinary.
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a1' }, '2026-08-20T18:00:00Z')).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a1' }, '2026-08-20T18:00:00Z', { params: { minCount: 3 } })).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a1' }, '2026-08-20T08:30:00Z')).toEqual({ outcome: 'no_hit' });
  });

  it('does not hit on transfers spread over more than 24h (at three)', async () => {
    await world.party('sp-p3');
    await world.account('sp-a3', 'sp-p3');
    await world.movements([
      pay('sp-n1', ['sp-a3', 'sp-p3'], ['sp-a2', 'sp-p2'], 10_000, '2026-08-19T18:00:00Z'),
      pay('sp-n2', ['sp-a3', 'sp-p3'], ['sp-a2', 'sp-p2'], 10_000, '2026-08-20T10:00:00Z'),
      pay('sp-n3', ['sp-a3', 'sp-p3'], ['sp-a2', 'sp-p2'], 10_000, '2026-08-20T19:00:00Z'),
    ]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a3' }, AT, { params: { minCount: 3 } })).toEqual({ outcome: 'no_hit' });
  });

  it('leaves out merchants and the party\'s own accounts', async () => {
    await world.party('sp-shop', { type: 'merchant', segment: 'merchant' });
    await world.account('sp-shop-a', 'sp-shop', { type: 'merchant' });
    await world.party('sp-p4');
    await world.account('sp-a4', 'sp-p4');
    await world.account('sp-a4s', 'sp-p4', { type: 'savings' });
    await world.movements([
      ...[1, 2, 3].map((i) => pay(`sp-c${i}`, ['sp-a4', 'sp-p4'], ['sp-shop-a', 'sp-shop'], 450, `2026-08-20T0${i}:00:00Z`, { type: 'merchant_payment' })),
      ...[1, 2, 3].map((i) => pay(`sp-s${i}`, ['sp-a4', 'sp-p4'], ['sp-a4s', 'sp-p4'], 5_000, `2026-08-20T1${i}:00:00Z`, { type: 'internal_transfer' })),
    ]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a4' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a4s' }, AT)).toEqual({ outcome: 'no_hit' });
    // Only the exclusions kept the merchant payments out.
    const nothingLeftOut = { excludeCounterpartySegments: [], excludeCounterpartyAccountTypes: [], excludeMovementTypes: [] };
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a4' }, AT, { params: { ...nothingLeftOut, excludeMovementTypes: ['merchant_payment'] } })).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a4' }, AT, { params: { ...nothingLeftOut, excludeCounterpartySegments: ['merchant'] } })).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a4' }, AT, { params: nothingLeftOut })).toMatchObject({
      outcome: 'hit',
      evidence: { counterparties: ['account:sp-shop-a'] },
    });
  });

  it('leaves out card payments at a shop that declared nothing, and judges the transfers beside them', async () => {
    // The shop is an ordinary party and account: only the movements' type says they are purchases.
    await world.party('sp-kiosk-p');
    await world.account('sp-kiosk', 'sp-kiosk-p');
    await world.party('sp-p6');
    await world.account('sp-a6', 'sp-p6');
    await world.party('sp-p7');
    await world.account('sp-a7', 'sp-p7');
    await world.movements([
      ...[1, 2, 3].map((i) => pay(`sp-k${i}`, ['sp-a6', 'sp-p6'], ['sp-kiosk', 'sp-kiosk-p'], 450, `2026-08-20T0${i}:00:00Z`, { type: 'merchant_payment' })),
      // To another customer: one transfer and one refund (a refund is not a payment made).
      pay('sp-t1', ['sp-a7', 'sp-p7'], ['sp-a6', 'sp-p6'], 2_000, '2026-08-20T10:00:00Z'),
      pay('sp-t2', ['sp-a7', 'sp-p7'], ['sp-a6', 'sp-p6'], 300, '2026-08-20T11:00:00Z', { type: 'refund' }),
    ]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a6' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-kiosk' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a6' }, AT, { params: { excludeMovementTypes: [] } })).toMatchObject({
      outcome: 'hit',
      evidence: { movements: ['sp-k3', 'sp-k2', 'sp-k1', 'sp-t2', 'sp-t1'], counterparties: ['account:sp-kiosk', 'account:sp-a7'] },
    });
    // A second transfer from the other customer makes that group a split of transfers; the card
    // payments stay out of it.
    await world.movements([pay('sp-t3', ['sp-a7', 'sp-p7'], ['sp-a6', 'sp-p6'], 1_500, '2026-08-20T12:00:00Z')]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a6' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: {
        movements: ['sp-t3', 'sp-t1'],
        counterparties: ['account:sp-a7'],
        amounts: { total: '3500', count: 2, in: '3500', out: '0' },
        thresholds: [{ name: 'movements_in_one_counterparty', threshold: 2, observed: 2 }],
      },
    });
  });

  it('leaves out an account paying itself (a reinvestment moves money to nobody)', async () => {
    await world.party('sp-p9');
    await world.account('sp-a9', 'sp-p9');
    await world.movements([1, 2, 3].map((i) => pay(`sp-r${i}`, ['sp-a9', 'sp-p9'], ['sp-a9', 'sp-p9'], 2_000, `2026-08-20T1${i}:00:00Z`)));
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a9' }, AT)).toEqual({ outcome: 'no_hit' });
  });

  it('leaves out a counterparty paid by more than twenty accounts in the window', async () => {
    await world.party('sp-hub-p');
    await world.account('sp-hub', 'sp-hub-p');
    const payers = Array.from({ length: 21 }, (_, i) => `sp-h${i}`);
    for (const payer of payers) {
      await world.party(`${payer}-p`);
      await world.account(payer, `${payer}-p`);
    }
    await world.movements([
      ...payers.map((payer, i) => pay(`sp-hm${i}`, [payer, `${payer}-p`], ['sp-hub', 'sp-hub-p'], 100, `2026-08-20T10:${String(i).padStart(2, '0')}:00Z`)),
      pay('sp-hm-again', ['sp-h0', 'sp-h0-p'], ['sp-hub', 'sp-hub-p'], 100, '2026-08-20T12:00:00Z'),
    ]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-h0' }, AT)).toEqual({ outcome: 'no_hit' });
    // Twenty-one others: one more than the default allows. Without the bound, a split.
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-h0' }, AT, { params: { maxCounterpartyReach: 21 } })).toMatchObject({ outcome: 'hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-h0' }, AT, { params: { maxCounterpartyReach: null } })).toMatchObject({
      outcome: 'hit',
      evidence: { counterparties: ['account:sp-hub'], thresholds: [{ name: 'movements_out_one_counterparty', observed: 2 }] },
    });
  });

  it('leaves out a counterparty paying more than twenty accounts in the window (an exchange paying out)', async () => {
    await world.party('sp-xch-p');
    await world.account('sp-xch', 'sp-xch-p');
    const payees = Array.from({ length: 21 }, (_, i) => `sp-x${i}`);
    for (const payee of payees) {
      await world.party(`${payee}-p`);
      await world.account(payee, `${payee}-p`);
    }
    await world.movements([
      ...payees.map((payee, i) => pay(`sp-xm${i}`, ['sp-xch', 'sp-xch-p'], [payee, `${payee}-p`], 100, `2026-08-20T10:${String(i).padStart(2, '0')}:00Z`)),
      pay('sp-xm-again', ['sp-xch', 'sp-xch-p'], ['sp-x0', 'sp-x0-p'], 100, '2026-08-20T12:00:00Z'),
    ]);
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-x0' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-x0' }, AT, { params: { maxCounterpartyReach: 21 } })).toMatchObject({
      outcome: 'hit',
      evidence: { counterparties: ['account:sp-xch'], thresholds: [{ name: 'movements_in_one_counterparty', observed: 2 }] },
    });
  });

  it('hits on a payment split to one external beneficiary, graded by the count', async () => {
    await world.party('sp-p5');
    await world.account('sp-a5', 'sp-p5');
    const beneficiary = { credit: { counterparty: { institution: 'Bank B', instrument_ref: 'iban-9', country: 'US' } } };
    await world.movements(Array.from({ length: 9 }, (_, i) => pay(`sp-e${i}`, ['sp-a5', 'sp-p5'], [null, null], 240_000, `2026-08-20T1${i}:00:00Z`, beneficiary)));
    await world.settle();
    expect(await world.evaluate(splitTransfers, { kind: 'account', id: 'sp-a5' }, AT)).toMatchObject({
      outcome: 'hit',
      severity: 'high',
      evidence: { counterparties: ['external:Bank B/iban-9'], amounts: { total: '2160000', count: 9 } },
    });
  });
});
