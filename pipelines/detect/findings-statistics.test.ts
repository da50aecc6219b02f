import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startDetectionWorld, type DetectionWorld } from '../../test/support/detection-world.ts';
import { indexConditions } from '../../test/support/query-plans.ts';
import { defineDetector, noHit } from '../../services/detection/framework/detector.ts';

// Detection asks, for each party mule_network looks at, whether it has an open live alert
// (flagged-loader.ts). A tenant's first few hundred alerts, unknown to the planner's statistics,
// had that probe planned through the index of the tenant's alerts by episode: every alert of the
// tenant read for each party asked: a third of detection's PostgreSQL time within a minute of load.

// Hits on every movement, its window the movement's instant alone: one alert per evaluation.
const everyMovement = defineDetector({
  id: 'every_movement',
  typology: 'probe',
  version: 1,
  subjects: ['account'],
  triggers: ['movement'],
  needs: [{ family: 'movement' }],
  windows: ['24h'],
  params: z.strictObject({}),
  async evaluate(ctx) {
    const [latest] = await ctx.activities(new Date(ctx.at.getTime() - 1));
    if (!latest) return noHit();
    return {
      outcome: 'hit',
      score: 0.5,
      severity: 'medium',
      summary: 'a movement',
      evidence: {
        movements: [latest.movementId],
        counterparties: [],
        amounts: { total: '1', count: 1, asset: ctx.baseAsset },
        window: { from: ctx.at.toISOString(), to: ctx.at.toISOString() },
        thresholds: [],
      },
    };
  },
});

const DAY_MS = 86_400_000;
// A chain of accounts of their own parties, one paying the next each day: two alerts a day, past
// the 200 evidence rows from which detection analyses its findings tables itself, over parties
// enough for the planner to tell a party's alerts from the tenant's.
const DAYS = 110;

let world: DetectionWorld;
const db = () => world.api.db.pool;

beforeAll(async () => {
  world = await startDetectionWorld();
  await world.startDetection({ library: [everyMovement] });
  for (let i = 0; i <= DAYS; i++) {
    await world.party(`p${i}`);
    await world.account(`a${i}`, `p${i}`);
  }
  await world.settle();
  const start = Date.parse('2026-01-01T12:00:00Z');
  await world.movements(
    Array.from({ length: DAYS }, (_, day) => ({
      id: `m-${day}`,
      from: [`a${day}`, `p${day}`],
      to: [`a${day + 1}`, `p${day + 1}`],
      value: 1000,
      at: new Date(start + day * DAY_MS),
    })),
  );
  await world.settle();
}, 180_000);
afterAll(async () => world?.close());

it('analyses the alerts table once detection has written a few hundred alerts, without waiting for autovacuum', async () => {
  const { rows } = await db().query<{ n: number }>('SELECT count(*)::int AS n FROM alert_evidence WHERE tenant_id = $1', [world.api.tenantId]);
  expect(rows[0]!.n).toBeGreaterThanOrEqual(200);
  await vi.waitFor(
    async () => {
      const analysed = await db().query<{ last_analyze: Date | null }>(`SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'alerts'`);
      expect(analysed.rows[0]!.last_analyze).not.toBeNull();
    },
    { timeout: 10_000, interval: 100 },
  );
});

it("plans the flagged-party probe on the party's open alerts, by party and window start", async () => {
  const { rows } = await db().query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON)
     SELECT u.i, u.party FROM unnest('{0,1}'::int[], '{p1,p999}'::text[], '{2026-06-01T00:00:00Z,2026-06-01T00:00:00Z}'::timestamptz[]) AS u(i, party, at)
      CROSS JOIN LATERAL (
        SELECT 1 FROM alerts a
         WHERE a.tenant_id = $1 AND a.mode = 'live' AND a.status = 'open' AND a.party_id = u.party AND a.window_from <= u.at
         LIMIT 1
      ) found`,
    [world.api.tenantId],
  );
  const conditions = indexConditions(rows[0]!['QUERY PLAN'], 'alerts_open_party');
  expect(conditions).toHaveLength(1);
  expect(conditions[0]).toMatch(/party_id = u\.party.*window_from <= u\.at/);
});
