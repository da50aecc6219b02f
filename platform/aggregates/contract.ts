import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Activity, AggregateStore, Retraction, Subject, WindowName, WindowStats } from './port.ts';
import { SnapshotReader } from './snapshot.ts';

// The one contract of the AggregateStore port: every adapter (PostgreSQL today, ClickHouse later)
// runs exactly this suite against a store of its own. Expected figures are computed by hand in
// the comments; each test uses subjects of its own, so tests do not see each other's activity.
// Money statistics of baselines are pinned to round half away from zero, so adapters agree.

export interface AggregateStoreFixture {
  store: AggregateStore;
  tenantId: string;
  close: () => Promise<void>;
}

const AT = new Date('2026-08-20T12:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const ago = (ms: number) => new Date(AT.getTime() - ms);
const utc = (iso: string) => new Date(iso);

interface ActivitySpec {
  at: Date;
  direction?: 'in' | 'out';
  // Base-asset minor units; null for an unpriced activity.
  base?: bigint | null;
  // As sent; defaults to the base value in USD, scale 2.
  amount?: { value: bigint; scale: number; asset: string };
  cash?: boolean;
  counterparty?: string | null;
  country?: string | null;
  corridor?: string | null;
  movementId?: string;
}

let movements = 0;
function activityOf(subject: Subject, spec: ActivitySpec): Activity {
  const base = spec.base === undefined ? 100n : spec.base;
  return {
    subject,
    movementId: spec.movementId ?? `mv-${++movements}`,
    eventId: randomUUID(),
    direction: spec.direction ?? 'in',
    occurredAt: spec.at,
    amount: spec.amount ?? { value: base ?? 1n, scale: 2, asset: 'USD' },
    baseValue: base,
    cash: spec.cash ?? false,
    counterparty: spec.counterparty ?? null,
    counterpartyCountry: spec.country ?? null,
    corridor: spec.corridor ?? null,
  };
}

function windowOf(stats: WindowStats[], name: WindowName): WindowStats {
  const found = stats.find((s) => s.window === name);
  if (!found) throw new Error(`no ${name} window in the result`);
  return found;
}

const NO_FLOW = { count: 0, sum: 0n, unpriced: 0, cashCount: 0, cashSum: 0n };

export function describeAggregateStoreContract(name: string, setup: () => Promise<AggregateStoreFixture>): void {
  describe(`AggregateStore contract: ${name}`, () => {
    let fixture: AggregateStoreFixture;
    beforeAll(async () => {
      fixture = await setup();
    });
    afterAll(async () => {
      await fixture?.close();
    });

    const subject = (id: string, kind: Subject['kind'] = 'account', tenantId = fixture.tenantId): Subject => ({ tenantId, kind, id });
    const record = (who: Subject, specs: ActivitySpec[]) => fixture.store.record(specs.map((spec) => activityOf(who, spec)));

    describe('windows', () => {
      it('are (at - length, at] for each of the five windows, in the order asked', async () => {
        const who = subject('windows');
        // Powers of two, so each sum names exactly the activities it contains.
        await record(who, [
          { at: ago(HOUR - 1), base: 1n },
          { at: AT, base: 2n },
          { at: new Date(AT.getTime() + 1), base: 4n },
          { at: ago(HOUR), base: 8n },
          { at: ago(DAY), base: 16n },
          { at: ago(7 * DAY), base: 32n },
          { at: ago(30 * DAY), base: 64n },
          { at: ago(90 * DAY), base: 128n },
          { at: ago(90 * DAY - 1), base: 256n },
        ]);
        const stats = await fixture.store.windows(who, AT);
        expect(stats.map((s) => s.window)).toEqual(['1h', '24h', '7d', '30d', '90d']);
        const expected: Record<WindowName, { count: number; sum: bigint; length: number }> = {
          '1h': { count: 2, sum: 3n, length: HOUR }, // at - 1h + 1 ms, at
          '24h': { count: 3, sum: 11n, length: DAY }, // + at - 1h
          '7d': { count: 4, sum: 27n, length: 7 * DAY }, // + at - 24h
          '30d': { count: 5, sum: 59n, length: 30 * DAY }, // + at - 7d
          '90d': { count: 7, sum: 379n, length: 90 * DAY }, // + at - 30d, at - 90d + 1 ms
        };
        for (const s of stats) {
          const want = expected[s.window];
          expect(s.from).toEqual(ago(want.length));
          expect(s.to).toEqual(AT);
          expect(s.in).toEqual({ count: want.count, sum: want.sum, unpriced: 0, cashCount: 0, cashSum: 0n });
          expect(s.out).toEqual(NO_FLOW);
          expect(s.lastActivityAt).toEqual(AT);
        }
        const some = await fixture.store.windows(who, AT, { windows: ['24h', '1h'] });
        expect(some.map((s) => [s.window, s.in.sum])).toEqual([['24h', 11n], ['1h', 3n]]);
      });

      it('count and sum each direction, cash apart, and count unpriced activities without summing them', async () => {
        const who = subject('flows');
        await record(who, [
          { at: ago(30 * MINUTE), direction: 'in', base: 10_000n, counterparty: 'party:P1', country: 'GB', corridor: 'GB>FR' },
          { at: ago(2 * HOUR), direction: 'in', base: 2_500n, cash: true, counterparty: 'party:P2', country: 'GB', corridor: 'GB>FR' },
          { at: ago(3 * HOUR), direction: 'in', base: null, cash: true, counterparty: 'party:P1', country: 'NG', corridor: 'NG>FR' },
          { at: ago(4 * HOUR), direction: 'out', base: 7_000n, counterparty: 'party:P3', country: 'US', corridor: 'FR>US' },
          { at: ago(5 * HOUR), direction: 'out', base: 300n, cash: true },
          { at: ago(6 * HOUR), direction: 'out', base: null, counterparty: 'party:P1' },
          { at: ago(7 * HOUR), direction: 'out', base: 40n, counterparty: 'party:P3', country: 'US', corridor: 'FR>US' },
          { at: ago(8 * HOUR), direction: 'out', base: 60n, counterparty: 'party:P5', country: 'US', corridor: 'FR>US' },
          { at: ago(3 * DAY), direction: 'in', base: 99n, cash: true, counterparty: 'party:P4', country: 'US' },
        ]);
        const stats = await fixture.store.windows(who, AT, { windows: ['1h', '24h', '7d'] });

        const hour = windowOf(stats, '1h');
        expect(hour.in).toEqual({ count: 1, sum: 10_000n, unpriced: 0, cashCount: 0, cashSum: 0n });
        expect(hour.out).toEqual(NO_FLOW);
        expect(hour.distinctCounterparties).toEqual({ in: 1, out: 0, total: 1 });
        expect(hour.countries).toEqual([{ key: 'GB', count: 1, sum: 10_000n }]);
        expect(hour.corridors).toEqual([{ key: 'GB>FR', count: 1, sum: 10_000n }]);

        const day = windowOf(stats, '24h');
        // in: 10 000 + 2 500 (+ one unpriced); cash: 2 500 and the unpriced one.
        expect(day.in).toEqual({ count: 3, sum: 12_500n, unpriced: 1, cashCount: 2, cashSum: 2_500n });
        // out: 7 000 + 300 + 40 + 60 (+ one unpriced); cash: 300.
        expect(day.out).toEqual({ count: 5, sum: 7_400n, unpriced: 1, cashCount: 1, cashSum: 300n });
        // in {P1, P2}, out {P3, P1, P5}; the activity without a counterparty is not one.
        expect(day.distinctCounterparties).toEqual({ in: 2, out: 3, total: 4 });
        expect(day.countries).toEqual([
          { key: 'US', count: 3, sum: 7_100n },
          { key: 'GB', count: 2, sum: 12_500n },
          { key: 'NG', count: 1, sum: 0n },
        ]);
        expect(day.corridors).toEqual([
          { key: 'FR>US', count: 3, sum: 7_100n },
          { key: 'GB>FR', count: 2, sum: 12_500n },
          { key: 'NG>FR', count: 1, sum: 0n },
        ]);

        const week = windowOf(stats, '7d');
        expect(week.in).toEqual({ count: 4, sum: 12_599n, unpriced: 1, cashCount: 3, cashSum: 2_599n });
        expect(week.out).toEqual(day.out);
        expect(week.distinctCounterparties).toEqual({ in: 3, out: 3, total: 5 });
        expect(week.countries).toEqual([
          { key: 'US', count: 4, sum: 7_199n },
          { key: 'GB', count: 2, sum: 12_500n },
          { key: 'NG', count: 1, sum: 0n },
        ]);
        expect(week.corridors).toEqual(day.corridors);
      });

      it('count as first seen only the counterparties whose first activity ever with the subject is in the window', async () => {
        const who = subject('first-seen');
        await record(who, [
          { at: ago(40 * DAY), counterparty: 'party:A' },
          { at: ago(2 * HOUR), counterparty: 'party:A' },
          { at: ago(3 * DAY), counterparty: 'party:B' },
          { at: ago(30 * MINUTE), counterparty: 'party:B' },
          { at: ago(10 * MINUTE), direction: 'out', counterparty: 'party:C' },
          { at: ago(100 * DAY), counterparty: 'party:D' },
          { at: ago(5 * HOUR), counterparty: 'party:D' },
          { at: ago(DAY), counterparty: 'party:F' },
          { at: ago(MINUTE), counterparty: null },
          { at: new Date(AT.getTime() + HOUR), counterparty: 'party:E' },
        ]);
        const stats = await fixture.store.windows(who, AT);
        const firstSeen = Object.fromEntries(stats.map((s) => [s.window, s.firstSeenCounterparties]));
        // 1h and 24h: C (B, A and D were seen earlier; F at exactly at - 24h is outside 24h).
        // 7d and 30d: + B and F. 90d: + A. D (first 100 days ago) and E (after at) never.
        expect(firstSeen).toEqual({ '1h': 1, '24h': 1, '7d': 3, '30d': 3, '90d': 4 });
        const total = Object.fromEntries(stats.map((s) => [s.window, s.distinctCounterparties.total]));
        expect(total).toEqual({ '1h': 2, '24h': 4, '7d': 5, '30d': 5, '90d': 5 });
      });

      it('count amounts just below each threshold band: threshold - margin <= amount < threshold, priced only', async () => {
        const who = subject('bands');
        await record(who, [
          { at: ago(90 * MINUTE), base: 1_000_000n }, // exactly at the threshold: not below
          { at: ago(2 * HOUR), base: 900_000n }, // exactly threshold - margin: below
          { at: ago(3 * HOUR), base: 899_999n }, // one under the band
          { at: ago(2 * DAY), base: 999_999n }, // below, in 7d only
          { at: ago(4 * HOUR), direction: 'out', base: 295_000n },
          { at: ago(5 * HOUR), base: 290_000n },
          { at: ago(6 * HOUR), base: 289_999n },
          { at: ago(7 * HOUR), base: 300_000n },
          { at: ago(8 * HOUR), base: null, amount: { value: 950_000n, scale: 2, asset: 'EUR' } },
        ]);
        const thresholds = [
          { threshold: 1_000_000n, margin: 100_000n },
          { threshold: 300_000n, margin: 10_000n },
          { threshold: 1_000_000n, margin: 1n },
        ];
        const stats = await fixture.store.windows(who, AT, { windows: ['1h', '24h', '7d'], thresholds });
        expect(windowOf(stats, '1h').belowThreshold).toEqual([
          { threshold: 1_000_000n, count: 0, sum: 0n },
          { threshold: 300_000n, count: 0, sum: 0n },
          { threshold: 1_000_000n, count: 0, sum: 0n },
        ]);
        expect(windowOf(stats, '24h').belowThreshold).toEqual([
          { threshold: 1_000_000n, count: 1, sum: 900_000n },
          { threshold: 300_000n, count: 2, sum: 585_000n },
          { threshold: 1_000_000n, count: 0, sum: 0n },
        ]);
        expect(windowOf(stats, '7d').belowThreshold).toEqual([
          { threshold: 1_000_000n, count: 2, sum: 1_899_999n },
          { threshold: 300_000n, count: 2, sum: 585_000n },
          { threshold: 1_000_000n, count: 1, sum: 999_999n },
        ]);
        const none = await fixture.store.windows(who, AT, { windows: ['7d'] });
        expect(none[0]!.belowThreshold).toEqual([]);
      });

      it('judge round amounts on the amount as sent, in major units of its own asset', async () => {
        const who = subject('round');
        await record(who, [
          { at: ago(MINUTE), base: 50_000n, amount: { value: 50_000n, scale: 2, asset: 'USD' } }, // 500.00
          { at: ago(2 * MINUTE), base: 50_001n, amount: { value: 50_001n, scale: 2, asset: 'USD' } }, // 500.01
          { at: ago(3 * MINUTE), base: 200n, amount: { value: 300n, scale: 0, asset: 'JPY' } },
          { at: ago(4 * MINUTE), base: 250n, amount: { value: 350n, scale: 0, asset: 'JPY' } },
          { at: ago(5 * MINUTE), base: null, amount: { value: 100_000n, scale: 2, asset: 'EUR' } }, // 1 000.00, unpriced
          { at: ago(6 * MINUTE), direction: 'out', base: 700n, amount: { value: 1_000n, scale: 0, asset: 'JPY' } },
        ]);
        const round = async (roundMajorUnits?: number) =>
          (await fixture.store.windows(who, AT, { windows: ['1h'], ...(roundMajorUnits ? { roundMajorUnits } : {}) }))[0]!.roundAmounts;
        // 100 units: 500.00 USD, 300 JPY, 1 000.00 EUR (counted, not summed), 1 000 JPY.
        expect(await round()).toEqual({ count: 4, sum: 50_900n });
        // 500 units: 500.00 USD, 1 000.00 EUR, 1 000 JPY.
        expect(await round(500)).toEqual({ count: 3, sum: 50_700n });
        // 1 000 units: 1 000.00 EUR, 1 000 JPY.
        expect(await round(1_000)).toEqual({ count: 2, sum: 700n });
      });

      it('are empty for a subject without activity', async () => {
        const stats = await fixture.store.windows(subject('nobody'), AT, { thresholds: [{ threshold: 100n, margin: 10n }] });
        expect(stats).toHaveLength(5);
        for (const s of stats) {
          expect(s).toEqual({
            window: s.window,
            from: s.from,
            to: AT,
            in: NO_FLOW,
            out: NO_FLOW,
            distinctCounterparties: { in: 0, out: 0, total: 0 },
            firstSeenCounterparties: 0,
            countries: [],
            corridors: [],
            belowThreshold: [{ threshold: 100n, count: 0, sum: 0n }],
            roundAmounts: { count: 0, sum: 0n },
            lastActivityAt: null,
          });
        }
      });

      it('report the latest activity up to at, even outside every window', async () => {
        const who = subject('quiet');
        await record(who, [{ at: ago(120 * DAY) }, { at: ago(100 * DAY) }, { at: new Date(AT.getTime() + MINUTE) }]);
        const stats = await fixture.store.windows(who, AT, { windows: ['90d'] });
        expect(stats[0]!.in.count).toBe(0);
        expect(stats[0]!.lastActivityAt).toEqual(ago(100 * DAY));
      });
    });

    describe('lastActivity and counterparty history', () => {
      it('finds the latest activity strictly before a time, or at any time', async () => {
        const who = subject('last');
        const [t1, t2, t3] = [ago(3 * DAY), ago(2 * DAY), ago(DAY)];
        await record(who, [{ at: t2 }, { at: t3 }, { at: t1 }]);
        expect(await fixture.store.lastActivity(who)).toEqual(t3);
        expect(await fixture.store.lastActivity(who, t3)).toEqual(t2);
        expect(await fixture.store.lastActivity(who, new Date(t2.getTime() + 1))).toEqual(t2);
        expect(await fixture.store.lastActivity(who, t1)).toBeNull();
        expect(await fixture.store.lastActivity(subject('never-active'))).toBeNull();
      });

      it('finds the latest activity in (after, upTo] for many subjects at once, including what was recorded since they were read', async () => {
        const who = subject('latest');
        const party = subject('latest', 'party');
        const [t1, t2, t3] = [ago(10 * DAY), ago(3 * DAY), ago(DAY)];
        await record(who, [{ at: t1 }, { at: t2 }]);
        await record(party, [{ at: t3 }]);
        // Read once (a store keeping what it read then holds the subject), then more recorded.
        await fixture.store.snapshots([{ subject: who, at: AT }], 1_000);
        await record(who, [{ at: t3 }]);
        const after = (t: Date, ms = 0) => new Date(t.getTime() + ms);
        expect(
          await fixture.store.latestWithin([
            { subject: who, after: t1, upTo: AT },
            { subject: who, after: t1, upTo: after(t3, -1) },
            { subject: who, after: after(t1, -1), upTo: t1 },
            { subject: who, after: t3, upTo: AT },
            { subject: party, after: ago(30 * DAY), upTo: AT },
            { subject: party, after: ago(30 * DAY), upTo: after(t3, -1) },
            { subject: subject('latest', 'account', `${fixture.tenantId}-other`), after: ago(30 * DAY), upTo: AT },
            { subject: subject('never-active-latest'), after: ago(30 * DAY), upTo: AT },
          ]),
        ).toEqual([t3, t2, t1, null, t3, null, null, null]);
        expect(await fixture.store.latestWithin([])).toEqual([]);
      });

      it("gives the subject's history with one counterparty up to and including at", async () => {
        const who = subject('history');
        const [t1, t2, t3] = [ago(30 * DAY), ago(20 * DAY), ago(10 * DAY)];
        await record(who, [
          { at: t1, base: 100n, counterparty: 'party:X' },
          { at: t2, direction: 'out', base: null, counterparty: 'party:X' },
          { at: t3, base: 300n, counterparty: 'party:X' },
          { at: t2, base: 5_000n, counterparty: 'party:Y' },
        ]);
        expect(await fixture.store.counterparty(who, 'party:X')).toEqual({ firstSeenAt: t1, lastSeenAt: t3, count: 3, sum: 400n });
        expect(await fixture.store.counterparty(who, 'party:X', t2)).toEqual({ firstSeenAt: t1, lastSeenAt: t2, count: 2, sum: 100n });
        expect(await fixture.store.counterparty(who, 'party:X', t1)).toEqual({ firstSeenAt: t1, lastSeenAt: t1, count: 1, sum: 100n });
        expect(await fixture.store.counterparty(who, 'party:X', new Date(t1.getTime() - 1))).toBeNull();
        expect(await fixture.store.counterparty(who, 'party:Y')).toEqual({ firstSeenAt: t2, lastSeenAt: t2, count: 1, sum: 5_000n });
        expect(await fixture.store.counterparty(who, 'party:nobody')).toBeNull();
      });
    });

    describe('activities', () => {
      it('lists the activities in (from, to], latest first, by direction and up to a limit', async () => {
        const who = subject('listed');
        const [t1, t2, t3] = [ago(3 * DAY), ago(2 * DAY), ago(DAY)];
        await record(who, [
          { at: t1, base: 100n, counterparty: 'account:A', movementId: 'l-1' },
          { at: t2, direction: 'out', base: null, amount: { value: 7n, scale: 0, asset: 'JPY' }, cash: true, country: 'NG', corridor: 'US>NG', movementId: 'l-2' },
          { at: t3, base: 300n, movementId: 'l-3' },
        ]);
        const all = await fixture.store.activities(who, ago(3 * DAY), AT);
        expect(all.map((a) => a.movementId)).toEqual(['l-3', 'l-2']);
        expect(all[1]).toEqual({
          movementId: 'l-2', direction: 'out', occurredAt: t2, amount: { value: 7n, scale: 0, asset: 'JPY' }, baseValue: null,
          cash: true, counterparty: null, counterpartyCountry: 'NG', corridor: 'US>NG',
        });
        expect((await fixture.store.activities(who, ago(4 * DAY), AT, { direction: 'in' })).map((a) => a.movementId)).toEqual(['l-3', 'l-1']);
        expect((await fixture.store.activities(who, ago(4 * DAY), AT, { limit: 1 })).map((a) => a.movementId)).toEqual(['l-3']);
        expect(await fixture.store.activities(who, ago(4 * DAY), t1)).toHaveLength(1);
        expect(await fixture.store.activities(subject('never-listed'), ago(4 * DAY), AT)).toEqual([]);
      });
    });

    describe('baseline', () => {
      it('averages whole UTC days before the day of at, from the first active day, zero-filled', async () => {
        const who = subject('baseline');
        await record(who, [
          { at: utc('2026-08-10T08:00:00Z'), base: 1_000n },
          { at: utc('2026-08-10T20:00:00Z'), base: 3_000n },
          { at: utc('2026-08-12T10:00:00Z'), base: null },
          { at: utc('2026-08-15T10:00:00Z'), base: 6_000n },
          { at: utc('2026-08-19T23:59:59.999Z'), base: 2_000n },
          // The day of at is not part of its baseline.
          { at: utc('2026-08-20T00:00:00.000Z'), base: 100_000n },
          { at: utc('2026-08-20T11:00:00Z'), base: 50_000n },
          { at: utc('2026-08-11T10:00:00Z'), direction: 'out', base: 10_000n },
          { at: utc('2026-08-19T10:00:00Z'), direction: 'out', base: 5_000n },
        ]);
        const baseline = await fixture.store.baseline(who, AT);
        // Aug 10 to Aug 19: 10 days.
        expect(baseline.days).toBe(10);
        expect(baseline.from).toEqual(utc('2026-08-10T00:00:00Z'));
        expect(baseline.to).toEqual(utc('2026-08-20T00:00:00Z'));
        // in sums [4000, 0, 0, 0, 0, 6000, 0, 0, 0, 2000]: mean 1200, variance 5 600 000 - 1 440 000
        // = 4 160 000, stddev 2039.6 → 2040. Counts [2, 0, 1, 0, 0, 1, 0, 0, 0, 1]: mean 0.5,
        // variance 0.7 - 0.25 = 0.45.
        expect(baseline.in.meanSum).toBe(1_200n);
        expect(baseline.in.stddevSum).toBe(2_040n);
        // The largest day: Aug 15's 6000, not the day of at's 150 000.
        expect(baseline.in.maxSum).toBe(6_000n);
        expect(baseline.in.meanCount).toBeCloseTo(0.5, 9);
        expect(baseline.in.stddevCount).toBeCloseTo(Math.sqrt(0.45), 9);
        // out sums [0, 10000, 0 × 7, 5000]: mean 1500, variance 12 500 000 - 2 250 000, stddev
        // 3201.56 → 3202. Counts: mean 0.2, variance 0.2 - 0.04 = 0.16.
        expect(baseline.out.meanSum).toBe(1_500n);
        expect(baseline.out.stddevSum).toBe(3_202n);
        expect(baseline.out.maxSum).toBe(10_000n);
        expect(baseline.out.meanCount).toBeCloseTo(0.2, 9);
        expect(baseline.out.stddevCount).toBeCloseTo(0.4, 9);

        const last3 = await fixture.store.baseline(who, AT, 3);
        // Aug 17 to 19: in [0, 0, 2000] → mean 666.7 → 667, stddev 942.8 → 943; out [0, 0, 5000].
        expect(last3.days).toBe(3);
        expect(last3.from).toEqual(utc('2026-08-17T00:00:00Z'));
        expect(last3.in).toMatchObject({ meanSum: 667n, stddevSum: 943n, maxSum: 2_000n });
        expect(last3.out).toMatchObject({ meanSum: 1_667n, stddevSum: 2_357n, maxSum: 5_000n });
        expect(last3.in.meanCount).toBeCloseTo(1 / 3, 9);
        expect(last3.in.stddevCount).toBeCloseTo(Math.sqrt(2 / 9), 9);
      });

      it('covers at most the days asked, and rounds money half away from zero', async () => {
        const long = subject('baseline-long');
        await record(long, [{ at: ago(200 * DAY), base: 5n }, { at: utc('2026-08-19T10:00:00Z'), base: 9_000n }]);
        const baseline = await fixture.store.baseline(long, AT);
        expect(baseline.days).toBe(90);
        expect(baseline.from).toEqual(utc('2026-05-22T00:00:00Z'));
        // [9000, 0 × 89]: mean 100, variance 900 000 - 10 000, stddev 943.4 → 943.
        expect(baseline.in).toMatchObject({ meanSum: 100n, stddevSum: 943n, maxSum: 9_000n });
        expect(baseline.in.meanCount).toBeCloseTo(1 / 90, 9);
        expect(baseline.in.stddevCount).toBeCloseTo(Math.sqrt(89) / 90, 9);
        expect(baseline.out).toEqual({ meanSum: 0n, stddevSum: 0n, maxSum: 0n, meanCount: 0, stddevCount: 0 });

        const half = subject('baseline-half');
        await record(half, [{ at: utc('2026-08-18T10:00:00Z'), base: 3n }]);
        // [3, 0]: mean 1.5 → 2, stddev 1.5 → 2.
        expect(await fixture.store.baseline(half, AT)).toEqual({
          days: 2,
          from: utc('2026-08-18T00:00:00Z'),
          to: utc('2026-08-20T00:00:00Z'),
          in: { meanSum: 2n, stddevSum: 2n, maxSum: 3n, meanCount: 0.5, stddevCount: 0.5 },
          out: { meanSum: 0n, stddevSum: 0n, maxSum: 0n, meanCount: 0, stddevCount: 0 },
        });
      });

      it('takes the largest day over every day of the span, the days without activity at zero', async () => {
        // Reversal legs can leave a day's sum below zero; a day without activity is zero.
        const negative = subject('baseline-negative');
        await record(negative, [{ at: utc('2026-08-18T10:00:00Z'), base: -700n }, { at: utc('2026-08-19T10:00:00Z'), base: -300n }]);
        expect((await fixture.store.baseline(negative, AT, 2)).in.maxSum).toBe(-300n);
        expect((await fixture.store.baseline(negative, AT, 3)).in.maxSum).toBe(-300n);
        const gap = subject('baseline-negative-gap');
        await record(gap, [{ at: utc('2026-08-17T10:00:00Z'), base: -700n }, { at: utc('2026-08-19T10:00:00Z'), base: -300n }]);
        expect((await fixture.store.baseline(gap, AT)).in.maxSum).toBe(0n);
      });

      it('is empty for a subject with no activity before the day of at', async () => {
        const today = subject('baseline-today');
        await record(today, [{ at: ago(HOUR), base: 500n }]);
        const empty = { days: 0, from: utc('2026-08-20T00:00:00Z'), to: utc('2026-08-20T00:00:00Z') };
        const zero = { meanSum: 0n, stddevSum: 0n, maxSum: 0n, meanCount: 0, stddevCount: 0 };
        expect(await fixture.store.baseline(today, AT)).toEqual({ ...empty, in: zero, out: zero });
        expect(await fixture.store.baseline(subject('baseline-nobody'), AT)).toEqual({ ...empty, in: zero, out: zero });
      });
    });

    describe('recording', () => {
      it('is idempotent: the same activities again are not new and change no statistic', async () => {
        const who = subject('idempotent');
        const activities = [
          activityOf(who, { at: ago(10 * MINUTE), base: 1_000n, counterparty: 'party:A', country: 'GB', corridor: 'GB>US' }),
          activityOf(who, { at: ago(2 * DAY), direction: 'out', base: 2_000n, cash: true, counterparty: 'party:B' }),
          activityOf(who, { at: ago(3 * DAY), base: null, counterparty: 'party:A' }),
        ];
        const snapshot = async () => ({
          windows: await fixture.store.windows(who, AT, { thresholds: [{ threshold: 2_500n, margin: 1_000n }] }),
          baseline: await fixture.store.baseline(who, AT),
          last: await fixture.store.lastActivity(who),
          history: await fixture.store.counterparty(who, 'party:A'),
        });
        expect(await fixture.store.record(activities)).toBe(3);
        const before = await snapshot();
        expect(windowOf(before.windows, '7d').in).toEqual({ count: 2, sum: 1_000n, unpriced: 1, cashCount: 0, cashSum: 0n });
        expect(await fixture.store.record(activities)).toBe(0);
        expect(await snapshot()).toEqual(before);
        // Duplicates within one batch count once.
        const fresh = activityOf(who, { at: ago(4 * DAY), base: 7n });
        expect(await fixture.store.record([activities[0]!, fresh, fresh, activities[1]!])).toBe(1);
        expect(windowOf(await fixture.store.windows(who, AT, { windows: ['7d'] }), '7d').in.sum).toBe(1_007n);
        expect(await fixture.store.record([])).toBe(0);
      });

      it('records overlapping batches written at the same time once each, in whatever order they come', async () => {
        const who = subject('concurrent');
        const activities = Array.from({ length: 60 }, (_, i) => activityOf(who, { at: ago(i * MINUTE), base: BigInt(i) }));
        // Three batches over the same keys, in different orders: together they hold each activity
        // at least twice, and every one must be new exactly once.
        const inserted = await Promise.all([
          fixture.store.record(activities.slice(0, 40)),
          fixture.store.record(activities.slice(20).reverse()),
          fixture.store.record([...activities.slice(40), ...activities.slice(0, 20)].reverse()),
        ]);
        expect(inserted.reduce((a, b) => a + b, 0)).toBe(60);
        // 0 + 1 + … + 59 = 1770.
        expect((await fixture.store.windows(who, AT, { windows: ['1h'] }))[0]!.in).toMatchObject({ count: 60, sum: 1_770n });
      });

      it('folds a late activity into the windows that contain it, and only those', async () => {
        const who = subject('late');
        await record(who, [
          { at: ago(10 * MINUTE), base: 100n, counterparty: 'party:A' },
          { at: ago(2 * DAY), direction: 'out', base: 200n, counterparty: 'party:B' },
        ]);
        const before = await fixture.store.windows(who, AT);
        expect(await record(who, [{ at: ago(20 * DAY), base: 400n, counterparty: 'party:C', country: 'NG' }])).toBe(1);
        const after = await fixture.store.windows(who, AT);
        for (const name of ['1h', '24h', '7d'] as const) expect(windowOf(after, name)).toEqual(windowOf(before, name));
        for (const name of ['30d', '90d'] as const) {
          const was = windowOf(before, name);
          const now = windowOf(after, name);
          expect(now.in).toEqual({ ...was.in, count: was.in.count + 1, sum: was.in.sum + 400n });
          expect(now.out).toEqual(was.out);
          expect(now.distinctCounterparties).toEqual({ in: 2, out: 1, total: 3 });
          expect(now.firstSeenCounterparties).toBe(was.firstSeenCounterparties + 1);
          expect(now.countries).toEqual([{ key: 'NG', count: 1, sum: 400n }]);
          expect(now.lastActivityAt).toEqual(ago(10 * MINUTE));
        }
      });

      it('moves a counterparty\'s first sighting back when an earlier activity with it arrives late', async () => {
        const who = subject('late-first-seen');
        await record(who, [{ at: ago(10 * MINUTE), counterparty: 'party:A' }]);
        expect(windowOf(await fixture.store.windows(who, AT), '1h').firstSeenCounterparties).toBe(1);
        await record(who, [{ at: ago(10 * DAY), counterparty: 'party:A' }]);
        const after = await fixture.store.windows(who, AT);
        expect(after.map((s) => s.firstSeenCounterparties)).toEqual([0, 0, 0, 1, 1]);
        expect((await fixture.store.counterparty(who, 'party:A'))?.firstSeenAt).toEqual(ago(10 * DAY));
      });
    });

    describe('retractions', () => {
      const retraction = (movementId: string, by: string, tenantId = fixture.tenantId): Retraction => ({ tenantId, movementId, by });

      it('take a corrected movement out of every read of each of its subjects, and only it', async () => {
        const payee = subject('retract-payee');
        const payer = subject('retract-payer', 'party');
        const original = 'retract-original';
        await fixture.store.record([
          activityOf(payee, { at: ago(2 * DAY), base: 5_000n, counterparty: 'party:retract-payer', country: 'NG', movementId: original }),
          activityOf(payer, { at: ago(2 * DAY), direction: 'out', base: 5_000n, counterparty: 'account:retract-payee', movementId: original }),
          activityOf(payee, { at: ago(3 * DAY), base: 300n, counterparty: 'party:someone', movementId: 'retract-kept' }),
        ]);
        expect(windowOf(await fixture.store.windows(payee, AT), '7d').in).toMatchObject({ count: 2, sum: 5_300n });
        // The correction names the original; its own activity (here: another amount, a day later)
        // is recorded beside the retraction.
        const correction = activityOf(payee, { at: ago(DAY), base: 500n, counterparty: 'party:retract-payer', movementId: 'retract-correction' });
        expect(await fixture.store.record([correction], [retraction(original, 'retract-correction')])).toBe(1);
        const week = windowOf(await fixture.store.windows(payee, AT), '7d');
        expect(week.in).toEqual({ count: 2, sum: 800n, unpriced: 0, cashCount: 0, cashSum: 0n });
        expect(week.countries).toEqual([]);
        expect(week.firstSeenCounterparties).toBe(2);
        expect((await fixture.store.activities(payee, ago(30 * DAY), AT)).map((a) => a.movementId)).toEqual(['retract-correction', 'retract-kept']);
        expect((await fixture.store.counterparty(payee, 'party:retract-payer'))?.firstSeenAt).toEqual(ago(DAY));
        expect(await fixture.store.lastActivity(payer)).toBeNull();
        expect(await fixture.store.counterparty(payer, 'account:retract-payee')).toBeNull();
        expect((await fixture.store.baseline(payer, AT)).days).toBe(0);
        const [snapshot] = await fixture.store.snapshots([{ subject: payee, at: AT, since: ago(10 * DAY) }], 100);
        expect(snapshot!.rows.map((row) => row.movementId)).toEqual(['retract-correction', 'retract-kept']);
        expect(snapshot!.firstActivityAt).toEqual(ago(3 * DAY));
        const [payerSnapshot] = await fixture.store.snapshots([{ subject: payer, at: AT }], 100);
        expect(payerSnapshot!.rows).toEqual([]);
        expect(payerSnapshot!.firstActivityAt).toBeNull();
      });

      it('keep a movement that arrives after its correction from ever counting, and are idempotent', async () => {
        const who = subject('retract-late-original');
        expect(await fixture.store.record([], [retraction('retract-late', 'retract-late-fix')])).toBe(0);
        const original = activityOf(who, { at: ago(HOUR), base: 900n, movementId: 'retract-late' });
        const fix = activityOf(who, { at: ago(HOUR), base: 90n, movementId: 'retract-late-fix' });
        expect(await fixture.store.record([original, fix])).toBe(1);
        expect(await fixture.store.record([original], [retraction('retract-late', 'retract-late-fix')])).toBe(0);
        expect(windowOf(await fixture.store.windows(who, AT), '24h').in).toMatchObject({ count: 1, sum: 90n });
        // A chain keeps its last link, whichever order it comes in, also within one batch.
        const last = activityOf(who, { at: ago(HOUR), base: 9n, movementId: 'retract-late-fix-2' });
        expect(await fixture.store.record([last], [retraction('retract-late-fix', 'retract-late-fix-2')])).toBe(1);
        expect(windowOf(await fixture.store.windows(who, AT), '24h').in).toMatchObject({ count: 1, sum: 9n });
        const one = activityOf(who, { at: ago(2 * HOUR), base: 1n, movementId: 'retract-batch' });
        const two = activityOf(who, { at: ago(2 * HOUR), base: 2n, movementId: 'retract-batch-fix' });
        expect(await fixture.store.record([one, two], [retraction('retract-batch', 'retract-batch-fix')])).toBe(1);
        expect(windowOf(await fixture.store.windows(who, AT), '24h').in).toMatchObject({ count: 2, sum: 11n });
      });

      it("never take back another tenant's movement of the same id", async () => {
        const mine = subject('retract-tenant');
        const theirs = subject('retract-tenant', 'account', `${fixture.tenantId}-other`);
        await fixture.store.record([
          activityOf(mine, { at: ago(HOUR), base: 100n, movementId: 'retract-same-id' }),
          activityOf(theirs, { at: ago(HOUR), base: 200n, movementId: 'retract-same-id' }),
        ]);
        await fixture.store.record([], [retraction('retract-same-id', 'retract-fix', `${fixture.tenantId}-other`)]);
        expect(windowOf(await fixture.store.windows(mine, AT), '24h').in).toMatchObject({ count: 1, sum: 100n });
        expect(windowOf(await fixture.store.windows(theirs, AT), '24h').in).toMatchObject({ count: 0, sum: 0n });
      });
    });

    describe('snapshots', () => {
      // A deterministic pseudo-random history: amounts round and not, priced and not, cash, a few
      // counterparties (some first seen long before the snapshot's range), countries, corridors,
      // several activities at one instant.
      const history = (who: Subject, seed: number): ActivitySpec[] => {
        let state = seed;
        const next = (n: number) => {
          state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
          return state % n;
        };
        const specs: ActivitySpec[] = [];
        for (let i = 0; i < 160; i++) {
          const at = ago(next(130) * DAY + next(24) * HOUR - (i % 9 === 0 ? 0 : next(3_600) * 1_000));
          const base = next(7) === 0 ? null : BigInt([100_00, 990_00, 1_234, 50_00, 999_99][next(5)]! + (i % 4 === 0 ? 0 : next(3)));
          specs.push({
            at,
            direction: next(2) === 0 ? 'in' : 'out',
            base,
            amount: { value: base ?? 5_000n, scale: next(3) === 0 ? 0 : 2, asset: 'USD' },
            cash: next(5) === 0,
            counterparty: next(6) === 0 ? null : `party:C${next(12)}`,
            country: next(3) === 0 ? null : ['GB', 'NG', 'US'][next(3)]!,
            corridor: next(4) === 0 ? null : ['GB>NG', 'US>GB'][next(2)]!,
            movementId: `snap-${who.id}-${i}`,
          });
        }
        return specs;
      };

      // Every read a snapshot answers, at one instant, compared with the store's answer; returns
      // how many reads were compared.
      const expectStoreAnswers = async (reader: SnapshotReader, who: Subject, at: Date): Promise<number> => {
        let answered = 0;
        const options = { thresholds: [{ threshold: 1_000_00n, margin: 10_00n }, { threshold: 51_00n, margin: 2_00n }], roundMajorUnits: 50 };
        // The default options again last: a reader counts a window once per instant, whatever
        // the options, and must not carry one read's bands or round units into another.
        for (const windowOptions of [{}, options, { windows: ['7d', '1h'] as WindowName[], roundMajorUnits: 0.5 }, { windows: ['1h', '7d'] as WindowName[] }]) {
          expect(reader.windows(at, windowOptions)).toEqual(await fixture.store.windows(who, at, windowOptions));
          answered++;
        }
        for (const days of [90, 30, 3, 0]) {
          const mine = reader.baseline(at, days)!;
          const store = await fixture.store.baseline(who, at, days);
          expect({ ...mine, in: { ...mine.in, meanCount: 0, stddevCount: 0 }, out: { ...mine.out, meanCount: 0, stddevCount: 0 } }).toEqual({
            ...store,
            in: { ...store.in, meanCount: 0, stddevCount: 0 },
            out: { ...store.out, meanCount: 0, stddevCount: 0 },
          });
          for (const side of ['in', 'out'] as const) {
            expect(mine[side].meanCount).toBeCloseTo(store[side].meanCount, 9);
            expect(mine[side].stddevCount).toBeCloseTo(store[side].stddevCount, 9);
          }
          answered++;
        }
        for (const before of [at, new Date(at.getTime() - 2 * DAY), new Date(at.getTime() - 80 * DAY)]) {
          expect(reader.lastActivity(before)).toEqual(await fixture.store.lastActivity(who, before));
          answered++;
        }
        for (const query of [{}, { direction: 'in' as const, limit: 5 }, { direction: 'out' as const }, { limit: 1 }]) {
          const from = new Date(at.getTime() - 20 * DAY);
          expect(reader.activities(from, at, query)).toEqual(await fixture.store.activities(who, from, at, query));
          answered++;
        }
        return answered;
      };

      it('answer every read they can exactly as the store does', async () => {
        const who = subject('snapshot-equal');
        await record(who, history(who, 7));
        const ats = [AT, ago(3 * DAY + 5 * HOUR), ago(40 * DAY), ago(100 * DAY)];
        const snapshots = await fixture.store.snapshots(ats.map((at) => ({ subject: who, at })), 10_000);
        let answered = 0;
        for (const [i, at] of ats.entries()) {
          expect(snapshots[i]!.complete).toBe(true);
          answered += await expectStoreAnswers(new SnapshotReader(snapshots[i]!), who, at);
        }
        expect(answered).toBe(4 * (4 + 4 + 3 + 4));
      });

      it('hold an activity at the first instant of the longest baseline, midnight 90 days back, as the store counts it', async () => {
        const who = subject('snapshot-midnight');
        await record(who, [{ at: ago(200 * DAY), base: 1n }, { at: utc('2026-05-22T00:00:00Z'), base: 9_000n }, { at: ago(DAY), base: 100n }]);
        const [snapshot] = await fixture.store.snapshots([{ subject: who, at: AT }], 100);
        const reader = new SnapshotReader(snapshot!);
        expect(reader.baseline(AT, 90)).toEqual(await fixture.store.baseline(who, AT, 90));
        expect(reader.baseline(AT, 90)!.in.meanSum).toBe(101n);
      });

      it('answer for every instant from `since` to `at` when asked to, exactly as the store does', async () => {
        const who = subject('snapshot-since');
        await record(who, history(who, 11));
        const ats = [AT, ago(3 * DAY + 5 * HOUR), ago(40 * DAY), ago(100 * DAY)];
        const [snapshot] = await fixture.store.snapshots([{ subject: who, at: AT, since: ago(100 * DAY) }], 10_000);
        expect(snapshot!.complete).toBe(true);
        const reader = new SnapshotReader(snapshot!);
        let answered = 0;
        for (const at of ats) answered += await expectStoreAnswers(reader, who, at);
        expect(answered).toBe(4 * (4 + 4 + 3 + 4));
        // Without `since`, the earliest instant's windows and baseline reach before the range.
        const [latestOnly] = await fixture.store.snapshots([{ subject: who, at: AT }], 10_000);
        expect(new SnapshotReader(latestOnly!).windows(ago(100 * DAY))).toBeUndefined();
      });

      it('decline what lies outside their range instead of guessing', async () => {
        const who = subject('snapshot-range');
        await record(who, [{ at: ago(200 * DAY) }, { at: ago(HOUR) }]);
        const [snapshot] = await fixture.store.snapshots([{ subject: who, at: ago(DAY) }], 100);
        const reader = new SnapshotReader(snapshot!);
        expect(snapshot!.rows).toEqual([]);
        expect(snapshot!.firstActivityAt).toEqual(ago(200 * DAY));
        expect(snapshot!.lastActivityAtOrBeforeFrom).toEqual(ago(200 * DAY));
        expect(reader.windows(AT)).toBeUndefined();
        expect(reader.activities(ago(300 * DAY), ago(DAY))).toBeUndefined();
        expect(reader.lastActivity(ago(150 * DAY))).toBeUndefined();
        expect(reader.lastActivity(ago(2 * DAY))).toEqual(ago(200 * DAY));
        expect(reader.windows(ago(DAY), { windows: ['90d'] })![0]!.lastActivityAt).toEqual(ago(200 * DAY));
      });

      it('are incomplete past the cap, keep the latest rows, and then answer nothing', async () => {
        const who = subject('snapshot-cap');
        await record(who, [{ at: ago(3 * HOUR) }, { at: ago(2 * HOUR) }, { at: ago(HOUR) }]);
        const [capped, exact] = await Promise.all([fixture.store.snapshots([{ subject: who, at: AT }], 2), fixture.store.snapshots([{ subject: who, at: AT }], 3)]);
        expect(capped[0]!.complete).toBe(false);
        expect(capped[0]!.rows.map((r) => r.occurredAt)).toEqual([ago(HOUR), ago(2 * HOUR)]);
        const reader = new SnapshotReader(capped[0]!);
        expect(reader.windows(AT)).toBeUndefined();
        expect(reader.baseline(AT)).toBeUndefined();
        expect(reader.lastActivity(AT)).toBeUndefined();
        expect(reader.activities(ago(DAY), AT)).toBeUndefined();
        expect(exact[0]!.complete).toBe(true);
        expect(new SnapshotReader(exact[0]!).windows(AT, { windows: ['24h'] })![0]!.in.count).toBe(3);
      });

      it('answer many subjects and tenants at once, each in the order asked', async () => {
        const a = subject('snapshot-many-a');
        const b = subject('snapshot-many-a', 'party');
        const c = subject('snapshot-many-a', 'account', `${fixture.tenantId}-other`);
        await record(a, [{ at: ago(HOUR), base: 1n, counterparty: 'party:X' }, { at: ago(50 * DAY), base: 1n, counterparty: 'party:X' }]);
        await record(b, [{ at: ago(2 * HOUR), base: 2n }]);
        await record(c, [{ at: ago(3 * HOUR), base: 4n }]);
        const got = await fixture.store.snapshots([c, subject('snapshot-none'), a, b].map((who) => ({ subject: who, at: AT })), 100);
        expect(got.map((s) => s.rows.map((r) => r.baseValue))).toEqual([[4n], [], [1n, 1n], [2n]]);
        expect(got.map((s) => s.subject)).toEqual([c, subject('snapshot-none'), a, b]);
        expect(got[1]!).toMatchObject({ complete: true, firstActivityAt: null, lastActivityAtOrBeforeFrom: null });
        expect(got[2]!.counterpartyFirstSeen).toEqual(new Map([['party:X', ago(50 * DAY)]]));
        const reader = new SnapshotReader(got[2]!);
        // First seen 50 days ago: no history up to 51 days ago; some at 50 days; unknown for others.
        expect(reader.noHistoryWith('party:X', ago(51 * DAY))).toBe(true);
        expect(await fixture.store.counterparty(a, 'party:X', ago(51 * DAY))).toBeNull();
        expect(reader.noHistoryWith('party:X', ago(50 * DAY))).toBeUndefined();
        expect(reader.noHistoryWith('party:Y', ago(51 * DAY))).toBeUndefined();
        expect(got[2]!.from).toEqual(new Date(utc('2026-05-22T00:00:00Z').getTime() - 1));
      });
    });

    describe('isolation', () => {
      it("never shows another tenant's activity for a subject of the same kind and id", async () => {
        const mine = subject('shared');
        const theirs = subject('shared', 'account', `${fixture.tenantId}-other`);
        await record(mine, [{ at: ago(DAY - HOUR), base: 100n, counterparty: 'party:M' }]);
        await record(theirs, [{ at: ago(2 * DAY), direction: 'out', base: 999n, counterparty: 'party:Z' }]);
        const week = (await fixture.store.windows(mine, AT, { windows: ['7d'] }))[0]!;
        expect(week.in).toEqual({ count: 1, sum: 100n, unpriced: 0, cashCount: 0, cashSum: 0n });
        expect(week.out).toEqual(NO_FLOW);
        expect(week.distinctCounterparties.total).toBe(1);
        expect(await fixture.store.lastActivity(mine, ago(DAY))).toBeNull();
        expect(await fixture.store.counterparty(mine, 'party:Z')).toBeNull();
        expect((await fixture.store.baseline(mine, AT)).days).toBe(1);
        const theirWeek = (await fixture.store.windows(theirs, AT, { windows: ['7d'] }))[0]!;
        expect(theirWeek.in).toEqual(NO_FLOW);
        expect(theirWeek.out).toEqual({ count: 1, sum: 999n, unpriced: 0, cashCount: 0, cashSum: 0n });
        expect(await fixture.store.counterparty(theirs, 'party:M')).toBeNull();
      });

      it('keeps two subjects apart, including an account and a party with the same id', async () => {
        const account = subject('X');
        const party = subject('X', 'party');
        const other = subject('Y');
        await record(account, [{ at: ago(HOUR / 2), base: 100n }]);
        await record(party, [{ at: ago(2 * HOUR), direction: 'out', base: 200n }]);
        await record(other, [{ at: ago(3 * HOUR), base: 400n }]);
        const day = async (who: Subject) => (await fixture.store.windows(who, AT, { windows: ['24h'] }))[0]!;
        expect((await day(account)).in).toMatchObject({ count: 1, sum: 100n });
        expect((await day(account)).out).toEqual(NO_FLOW);
        expect((await day(party)).out).toMatchObject({ count: 1, sum: 200n });
        expect((await day(party)).in).toEqual(NO_FLOW);
        expect((await day(other)).in).toMatchObject({ count: 1, sum: 400n });
        expect(await fixture.store.lastActivity(party)).toEqual(ago(2 * HOUR));
      });
    });
  });
}
