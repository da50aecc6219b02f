import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRateFile } from '../../../platform/fx/rate-files.ts';
import type { CanonicalChange, ControlEventChange, MovementChange } from '../../../schemas/bus/canonical-change.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { changesIn } from './backtest.ts';

// A backtest replays history as the change records the canonical pipeline published for it: the
// records it rebuilds from the stored rows must be the very records on the bus, field for field.
describe('the change records a backtest replays', () => {
  let world: DetectionWorld;
  beforeAll(async () => {
    world = await startDetectionWorld();
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  });

  const published = async (): Promise<CanonicalChange[]> => {
    const { rows } = await world.api.db.pool.query<{ payload: string }>(
      `SELECT payload FROM outbox WHERE stream = 'canonical' AND topic IN ('canonical.movement', 'canonical.control_event')`,
    );
    return rows.map((r) => JSON.parse(r.payload) as CanonicalChange);
  };

  it('rebuilds every movement and control event as it was published', async () => {
    const loaded = await loadRateFile(world.api.db.pool, 'rates.csv', 'base,quote,rate,rate_scale,valid_from\nEUR,USD,1.0825,4,2026-01-01T00:00:00Z\n', world.api.clock.now());
    expect(loaded.kind).toBe('loaded');
    await world.party('rc-p1');
    await world.party('rc-p2');
    await world.account('rc-a1', 'rc-p1', { jurisdiction: 'GB' });
    await world.account('rc-a2', 'rc-p2');
    // Landed by a historical import: replayed with its flag, like the others with theirs.
    await world.importMovements([{ id: 'rc-m0', from: ['rc-a1', null], to: ['rc-a2', null], value: 500, at: '2026-02-15T10:00:00Z' }], '2026-02-20T00:00:00Z');
    await world.movements([
      // Base asset; the debit party is the account's holder, the credit side external with a declared country.
      { id: 'rc-m1', from: ['rc-a1', null], to: [null, 'rc-p2'], value: 12550, at: '2026-03-01T10:00:00Z', toCountry: 'NG' },
      // Converted at the tenant's rate; the counterparty's country over the account's jurisdiction.
      { id: 'rc-m2', from: ['rc-a1', 'rc-p1'], to: ['rc-a2', null], value: 2000, asset: 'EUR', at: '2026-03-02T10:00:00.123Z', fromCountry: 'FR' },
      // No rate for this asset: no base amount.
      { id: 'rc-m3', from: ['rc-a2', null], to: ['rc-a1', null], value: 700, asset: 'GBP', at: '2026-03-03T10:00:00Z' },
    ]);
    await world.controlEvent('rc-c1', 'auth.suspicious_login', { kind: 'account', external_id: 'rc-a2' }, '2026-03-04T10:00:00Z');
    await world.controlEvent('rc-c2', 'device.changed', { kind: 'party', external_id: 'rc-p1' }, '2026-03-05T10:00:00Z');
    await world.settle();

    const replayed = await changesIn({ ...world.stores, clock: world.api.clock }, world.api.tenantId, 'USD', new Date('2026-02-01T00:00:00Z'), new Date('2026-04-01T00:00:00Z'), 100);
    const bus = await published();
    expect(bus).toHaveLength(6);
    expect(replayed.map((change) => change.external_id)).toEqual(['rc-m0', 'rc-m1', 'rc-m2', 'rc-m3', 'rc-c1', 'rc-c2']);
    for (const change of replayed) expect(change).toStrictEqual(bus.find((record) => record.external_id === change.external_id));
    // What the rules derived, so equal records are not equally wrong.
    const [m0, m1, m2, m3, c1, c2] = replayed as [MovementChange, MovementChange, MovementChange, MovementChange, ControlEventChange, ControlEventChange];
    expect(replayed.map((change) => change.historical)).toEqual([true, false, false, false, false, false]);
    expect(m0.debit).toEqual({ account_id: 'rc-a1', party_id: 'rc-p1', country: 'GB' });
    expect(m1.debit).toEqual({ account_id: 'rc-a1', party_id: 'rc-p1', country: 'GB' });
    expect(m1.credit).toEqual({ account_id: null, party_id: 'rc-p2', country: 'NG' });
    expect(m1.base_amount).toEqual({ value: '12550', asset: 'USD', scale: 2 });
    expect(m2.debit.country).toBe('FR');
    expect(m2.base_amount).toEqual({ value: '2165', asset: 'USD', scale: 2 });
    expect(m3.base_amount).toBeNull();
    expect(c1.subject_party_id).toBe('rc-p2');
    expect(c2.subject_party_id).toBe('rc-p1');
  }, 120_000);
});
