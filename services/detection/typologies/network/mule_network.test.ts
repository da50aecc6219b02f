import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDetectionWorld, type DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { Hit } from '../../framework/detector.ts';
import { muleNetwork } from './mule_network.ts';
import { before, cutShortContext, DAY, holders, range, side } from './test-kit.ts';

const AT = '2026-08-20T12:00:00Z';
const openedDaysAgo = (days: number) => ({ opened_at: new Date(Date.parse(AT) - days * DAY).toISOString() });

describe('mule_network', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  });
  afterAll(async () => world?.close());

  // An alert on a party, written directly: the alert pipeline is not part of this world.
  async function alertOn(party: string, status: 'open' | 'closed') {
    await world.api.db.pool.query(
      `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                           window_from, window_to, score, severity, status, summary, explanation, hits, created_at, updated_at)
       VALUES ($1, $2, 'live', 1, 'fan_in', 1, 'Fan-in', 'party', $3, $3, $4, $4, 0.6, 'medium', $5, 's', 'e', 1, now(), now())`,
      [world.api.tenantId, randomUUID(), party, before(AT, 10 * 24), status],
    );
  }

  // `n` new senders pay the account `value` each within the last two days.
  async function fanIn(account: string, prefix: string, n: number, value: number) {
    const senders = range(prefix, n);
    await holders(world, senders);
    await world.movements(senders.map((s, i) => ({ id: `${prefix}-m${i + 1}`, from: side(s), to: side(account), value, at: before(AT, 40 - i) })));
    return senders;
  }

  it('hits on all four indicators at once, critically', async () => {
    await world.party('mn-a-p', { identifiers: [{ type: 'phone', value: '+15550000001' }] });
    await world.account('mn-a', 'mn-a-p', openedDaysAgo(20));
    await world.party('mn-bad-p', { identifiers: [{ type: 'phone', value: '+15550000001' }] });
    await alertOn('mn-bad-p', 'open');
    const senders = await fanIn('mn-a', 'mn-a-s', 5, 40_000);
    await holders(world, ['mn-a-out']);
    await world.movement({ id: 'mn-a-out1', from: side('mn-a'), to: side('mn-a-out'), value: 190_000, at: before(AT, 5) });
    await world.settle();

    const hit = (await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-a' }, AT)) as Hit;
    expect(hit.outcome).toBe('hit');
    expect(hit.severity).toBe('critical');
    expect(hit.evidence.facts).toMatchObject({
      indicators: ['young_account', 'unrelated_fan_in', 'pass_through', 'shares_with_flagged'],
      shared_with_flagged: [{ via: { kind: 'identifier' }, parties: ['mn-bad-p'] }],
    });
    // The account's age grows with the evaluation's instant: it is a threshold's observation, never a
    // fact, or a later judgement of the same movements would reopen an alert closed on them
    // (pipelines/detect/alerts.ts compares facts).
    expect(hit.evidence.facts).not.toHaveProperty('account_age_days');
    expect(hit.evidence.thresholds).toEqual([
      { name: 'account_age_days', threshold: 90, observed: 20 },
      { name: 'new_senders', threshold: 4, observed: 5 },
      { name: 'new_sender_share', threshold: 0.6, observed: 1 },
      { name: 'pass_through_inflow', threshold: '100000', observed: '200000' },
      { name: 'pass_through_ratio', threshold: 0.8, observed: 0.95 },
      { name: 'flagged_linked_parties', threshold: 1, observed: 1 },
      { name: 'indicators', threshold: 2, observed: 4 },
    ]);
    expect(hit.evidence.counterparties[0]).toBe('party:mn-bad-p');
    expect(hit.evidence.counterparties).toEqual(expect.arrayContaining(senders.map((s) => `account:${s}`)));
    expect(hit.evidence.movements).toEqual(expect.arrayContaining(['mn-a-out1', ...range('mn-a-s-m', 5)]));
    expect(hit.evidence.movements[0]).toBe('mn-a-out1');
    expect(hit.summary).toContain('4 money-mule indicators');
  });

  // Changed with the network context (issue 32): fan-in passed on is, alone, what any busy account of
  // a random payment network does; it takes ties to flagged parties to make a mule.
  it('does not hit on the two flow indicators alone, and hits when parties on the flows are flagged', async () => {
    await holders(world, ['mn-flow', 'mn-flow-out']);
    const senders = await fanIn('mn-flow', 'mn-flow-s', 5, 40_000);
    await world.movement({ id: 'mn-flow-out1', from: side('mn-flow'), to: side('mn-flow-out'), value: 190_000, at: before(AT, 5) });
    await world.settle();
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-flow' }, AT)).toEqual({ outcome: 'no_hit' });

    // One sender under an open alert: below two.
    const two = { params: { minLinkedCounterparties: 2 } };
    await alertOn(`${senders[0]}-p`, 'open');
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-flow' }, AT, two)).toEqual({ outcome: 'no_hit' });
    // The payee the money went on to as well: two parties on the flows are flagged.
    await alertOn('mn-flow-out-p', 'open');
    const hit = (await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-flow' }, AT, two)) as Hit;
    expect(hit).toMatchObject({
      outcome: 'hit',
      severity: 'high',
      evidence: { facts: { indicators: ['unrelated_fan_in', 'pass_through', 'deals_with_flagged'], flagged_counterparties: ['mn-flow-out-p', `${senders[0]}-p`] } },
    });
    expect(hit.evidence.thresholds).toContainEqual({ name: 'linked_counterparties', threshold: 2, observed: 2 });
    expect(hit.evidence.counterparties).toEqual(expect.arrayContaining([`party:${senders[0]}-p`, 'party:mn-flow-out-p']));
    expect(hit.summary).toContain('2 of the parties it was paid by or paid on to are under an open alert');
  });

  it('does not count cash paid in and taken out again on a young account as a pass-through', async () => {
    await world.party('mn-cash-p');
    await world.account('mn-cash', 'mn-cash-p', openedDaysAgo(30));
    await world.party('mn-wired-p');
    await world.account('mn-wired', 'mn-wired-p', openedDaysAgo(30));
    await holders(world, ['mn-wired-src']);
    await world.movements([
      { id: 'mn-cash-in', from: [null, null], to: ['mn-cash', 'mn-cash-p'], value: 400_000, at: before(AT, 30), type: 'cash_in' },
      { id: 'mn-cash-out', from: ['mn-cash', 'mn-cash-p'], to: [null, null], value: 390_000, at: before(AT, 10), type: 'cash_out' },
      // The same sums received from another party and taken out in cash.
      { id: 'mn-wired-in', from: side('mn-wired-src'), to: ['mn-wired', 'mn-wired-p'], value: 400_000, at: before(AT, 30) },
      { id: 'mn-wired-out', from: ['mn-wired', 'mn-wired-p'], to: [null, null], value: 390_000, at: before(AT, 10), type: 'cash_out' },
    ]);
    await world.settle();
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-cash' }, AT)).toEqual({ outcome: 'no_hit' });
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-wired' }, AT)).toMatchObject({
      outcome: 'hit',
      evidence: { facts: { indicators: ['young_account', 'pass_through'] } },
    });
  });

  it('scores two strong indicators medium and a young account with one other low', async () => {
    // An old account: fan-in from new senders (one of them flagged), then passed on.
    await holders(world, ['mn-old', 'mn-old-out']);
    const senders = await fanIn('mn-old', 'mn-old-s', 5, 40_000);
    await alertOn(`${senders[0]}-p`, 'open');
    await world.movement({ id: 'mn-old-out1', from: side('mn-old'), to: side('mn-old-out'), value: 190_000, at: before(AT, 5) });
    // A young account sharing a national id with a party under an open alert.
    await world.party('mn-y-p', { identifiers: [{ type: 'national_id', value: 'ID-77' }] });
    await world.account('mn-y', 'mn-y-p', openedDaysAgo(30));
    await world.party('mn-y-bad-p', { identifiers: [{ type: 'national_id', value: 'ID-77' }] });
    await alertOn('mn-y-bad-p', 'open');
    await world.settle();

    // Two flow indicators and one flagged sender (enough at minLinkedCounterparties 1): the context
    // makes the hit, the flows its strength.
    const medium = (await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-old' }, AT, { params: { minIndicators: 3, minLinkedCounterparties: 1 } })) as Hit;
    expect(medium).toMatchObject({ outcome: 'hit', severity: 'high', evidence: { facts: { indicators: ['unrelated_fan_in', 'pass_through', 'deals_with_flagged'] } } });
    // Five inflows (the fan-in's, the pass-through's too) and one outflow: six movements, each once.
    expect([medium.evidence.movements.length, medium.evidence.amounts?.count]).toEqual([6, 6]);
    const low = (await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-y' }, AT)) as Hit;
    expect(low).toMatchObject({ outcome: 'hit', severity: 'low', evidence: { facts: { indicators: ['young_account', 'shares_with_flagged'] } } });
    expect(low.score).toBeLessThan(medium.score);
  });

  it('does not hit on one indicator: a young account linked only to a party whose alert was closed', async () => {
    await world.party('mn-n-p', { identifiers: [{ type: 'phone', value: '+15550000009' }] });
    await world.account('mn-n', 'mn-n-p', openedDaysAgo(10));
    await world.party('mn-n-other-p', { identifiers: [{ type: 'phone', value: '+15550000009' }] });
    await alertOn('mn-n-other-p', 'closed');
    // Three new senders: one short of the fan-in indicator.
    await fanIn('mn-n', 'mn-n-s', 3, 40_000);
    await world.settle();
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-n' }, AT)).toEqual({ outcome: 'no_hit' });
    // With one indicator enough it is a hit, on the young account alone.
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-n' }, AT, { params: { minIndicators: 1 } })).toMatchObject({
      outcome: 'hit',
      evidence: { facts: { indicators: ['young_account'] } },
    });
  });

  it('cannot judge an account it has no data for, and is not applicable to parties', async () => {
    expect(await world.evaluate(muleNetwork, { kind: 'account', id: 'mn-unknown' }, AT)).toMatchObject({ outcome: 'insufficient_data' });
    expect(await world.evaluate(muleNetwork, { kind: 'party', id: 'mn-a-p' }, AT)).toMatchObject({ outcome: 'not_applicable' });
  });

  it('cannot judge a young account whose network reads were cut short before they returned anything', async () => {
    // Young, so one more indicator would make a hit: the senders' read and the shared-attributes
    // read both ran out of their budget.
    const young = (cut: boolean) =>
      cutShortContext('mn-cut', AT, {
        account: async () => ({ data: { opened_at: before(AT, 5 * 24) } }),
        activities: async () => [],
        partyId: async () => 'mn-cut-p',
        sharedAttributes: async () => ({ shared: [], truncated: cut }),
        flaggedParties: async () => [],
        ...(cut ? {} : { fanIn: async () => ({ account: 'mn-cut', counterparties: [], count: 0, sum: 0n, truncated: false }) }),
      });
    expect(await muleNetwork.evaluate(young(true), muleNetwork.params.parse({}))).toMatchObject({ outcome: 'insufficient_data' });
    expect(await muleNetwork.evaluate(young(false), muleNetwork.params.parse({}))).toEqual({ outcome: 'no_hit' });
  });
});
