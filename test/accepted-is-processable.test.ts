// Accepted implies processable: every event the edge accepts passes through canonical, graph,
// aggregates and detection without an error and without being parked. Generated events are valid
// but odd: leap seconds, extreme offsets and fractions, the first and last years a store can hold,
// 38-digit amounts, unicode and maximal lengths. One accepted event any pipeline cannot process
// would stall a partition (or, since parking, be parked): either fails this test.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ParkedRecordStore } from '../platform/bus/parking/store.ts';
import { loadRateFile } from '../platform/fx/rate-files.ts';
import { accountEvent, movementEvent, partyEvent } from './fixtures/events.ts';
import { startDetectionWorld, type DetectionWorld } from './support/detection-world.ts';

let world: DetectionWorld;
beforeAll(async () => {
  world = await startDetectionWorld({ SVC_RATE_LIMIT_CAPACITY: '1000000', SVC_RATE_LIMIT_REFILL_PER_S: '1000000' });
  await world.startDetection();
}, 120_000);
afterAll(async () => world?.close());

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const offset = fc.oneof(
  fc.constant('Z'),
  fc.constantFrom('+23:59', '-23:59', '+00:00', '-00:00', '+05:45', '-09:30'),
);
const fraction = fc.oneof(fc.constant(''), fc.integer({ min: 1, max: 9 }).map((digits) => `.${'9'.repeat(digits)}`), fc.constant('.000000001'));
// An instant of the given years, sometimes a leap second (second 60, at the end of any minute).
const instant = (minYear: number, maxYear: number) =>
  fc
    .record({
      year: fc.integer({ min: minYear, max: maxYear }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 28 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constant(60)),
      fraction,
      offset,
    })
    .map((t) => `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${t.fraction}${t.offset}`);
// Event time: in the past, so never past the future skew.
const occurredAt = fc.oneof(instant(2000, 2025), fc.constantFrom('2016-12-31T23:59:60Z', '2016-12-31T23:59:60.999999+23:59', '1972-06-30T23:59:60Z'));
// Other instants: any year a store can hold, an offset away from either end.
const anyInstant = fc.oneof(instant(2, 9998), fc.constantFrom('0002-01-01T00:00:00Z', '9998-12-31T23:59:60.5-23:59'));
const text = (max: number) => fc.string({ unit: 'grapheme', minLength: 1, maxLength: max });
const amount = fc.oneof(fc.constantFrom('1', '-1', '0', '9'.repeat(38), `-${'9'.repeat(38)}`), fc.bigInt({ min: 1n, max: 10n ** 38n - 1n }).map(String));

const world$ = fc.record({
  partyAt: occurredAt,
  createdAt: anyInstant,
  kycAt: anyInstant,
  name: text(200),
  openedAt: anyInstant,
  movements: fc.array(fc.record({ at: occurredAt, value: amount, memo: text(200) }), { minLength: 1, maxLength: 6 }),
});

let runs = 0;

it('processes every accepted odd-but-valid event in every pipeline', async () => {
  const parked = new ParkedRecordStore(world.api.db.pool);
  await fc.assert(
    fc.asyncProperty(world$, async (generated) => {
      // Ids of their own for every run, shrinking included: a run repeats none of an earlier one's.
      const w = { ...generated, tag: `r${++runs}` };
      const [a, b, x, y] = ['a', 'b', 'x', 'y'].map((s) => `${s}-${w.tag}`) as [string, string, string, string];
      const party = (id: string) => {
        const base = partyEvent(id);
        return { ...base, occurred_at: w.partyAt, data: { ...base.data, created_at: w.createdAt, legal_names: [w.name], kyc: { tier: 'standard', updated_at: w.kycAt } } };
      };
      const account = (id: string, holder: string) => {
        const base = accountEvent(id, holder);
        return { ...base, occurred_at: w.partyAt, data: { ...base.data, opened_at: w.openedAt } };
      };
      const movements = w.movements.map((m, n) => {
        const base = movementEvent(`mv-${w.tag}-${n}`);
        return {
          ...base,
          occurred_at: m.at,
          recorded_at: m.at,
          data: { ...base.data, amount: { value: m.value, asset: 'USD', scale: 2 }, memo: m.memo, debit: { account_id: x, party_id: a }, credit: { account_id: y, party_id: b }, fees: [] },
        };
      });
      const events = [
        { object: 'party', event: party(a) },
        { object: 'party', event: party(b) },
        { object: 'account', event: account(x, a) },
        { object: 'account', event: account(y, b) },
        ...movements.map((event) => ({ object: 'movement', event })),
      ];
      const res = await world.api.client.post('/v1/batches', { events }, world.api.keys.ingest);
      const body = res.json() as { accepted: number; rejected: number; results: unknown[] };
      expect(res.statusCode, res.body).toBe(202);
      expect(body.rejected, res.body).toBe(0);
      // Every group takes it in (settle fails on any pipeline error, a parked record included).
      await world.settle();
      expect(await parked.list({})).toEqual([]);
      const { rows } = await world.api.db.pool.query<{ status: string; events: number }>(
        `SELECT status, count(*)::int AS events FROM inbox_events WHERE tenant_id = $1 AND external_id LIKE $2 GROUP BY status`,
        [world.api.tenantId, `%${w.tag}%`],
      );
      expect(rows).toEqual([{ status: 'processed', events: events.length }]);
    }),
    { numRuns: 25, seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
  );
}, 300_000);

// A conversion can carry an accepted amount past 38 digits (9…9 EUR at 1.5 USD): the movement is
// still processed everywhere, and the graph holds it with its exact base-asset amount.
it('processes a movement whose base-asset amount has more digits than any accepted amount', async () => {
  const rates = 'base,quote,rate,rate_scale,valid_from\nEUR,USD,1.5,1,2000-01-01T00:00:00Z\n';
  expect((await loadRateFile(world.api.db.pool, 'rates.csv', rates, new Date())).kind).toBe('loaded');
  const [a, b, x, y] = ['big-a', 'big-b', 'big-x', 'big-y'];
  const movement = movementEvent('big-eur');
  movement.data = { ...movement.data, amount: { value: '9'.repeat(38), asset: 'EUR', scale: 2 }, debit: { account_id: x, party_id: a }, credit: { account_id: y, party_id: b }, fees: [] };
  const events = [
    { object: 'party', event: partyEvent(a) },
    { object: 'party', event: partyEvent(b) },
    { object: 'account', event: accountEvent(x, a) },
    { object: 'account', event: accountEvent(y, b) },
    { object: 'movement', event: movement },
  ];
  const res = await world.api.client.post('/v1/batches', { events }, world.api.keys.ingest);
  expect(res.statusCode, res.body).toBe(202);
  await world.settle();
  expect(await new ParkedRecordStore(world.api.db.pool).list({})).toEqual([]);
  const { rows } = await world.api.db.pool.query<{ amount: string }>(
    'SELECT amount::text FROM graph_transfers WHERE tenant_id = $1 AND movement_id = $2',
    [world.api.tenantId, 'big-eur'],
  );
  expect(rows).toEqual([{ amount: `14${'9'.repeat(36)}8` }]);
}, 120_000);
