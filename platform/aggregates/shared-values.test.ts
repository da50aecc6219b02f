import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import type { Activity, Subject } from './port.ts';
import { PostgresAggregateStore } from './postgres.ts';
import { SharedValues } from './shared-values.ts';

describe('SharedValues', () => {
  it('hands out the first of equal instants and texts, and keeps unequal ones apart', () => {
    const shared = new SharedValues();
    const first = new Date('2026-08-20T12:00:00Z');
    expect(shared.instant(first)).toBe(first);
    expect(shared.instant(new Date('2026-08-20T12:00:00Z'))).toBe(first);
    const other = new Date('2026-08-20T12:00:01Z');
    expect(shared.instant(other)).toBe(other);
    const text = ['account:', 'A-1'].join('');
    expect(shared.text(text)).toBe(text);
    expect(shared.text(['account:', 'A-1'].join(''))).toBe(text);
    expect(shared.text(null)).toBeNull();
  });

  it("shares a movement's amount between its legs only while it is equal", () => {
    const shared = new SharedValues();
    const amount = shared.amount('m-1', 100n, 2, 'USD');
    expect(shared.amount('m-1', 100n, 2, 'USD')).toBe(amount);
    expect(shared.amount('m-1', 100n, 3, 'USD')).toEqual({ value: 100n, scale: 3, asset: 'USD' });
    expect(shared.amount('m-2', 100n, 2, 'USD')).not.toBe(amount);
  });
});

describe('PostgresAggregateStore reads', () => {
  let db: TestDatabase;
  let store: PostgresAggregateStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresAggregateStore(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  const at = new Date('2026-08-20T12:00:00.000Z');
  const leg = (subject: Subject, direction: 'in' | 'out', counterparty: string): Activity => ({
    subject,
    movementId: 'm-shared',
    eventId: randomUUID(),
    direction,
    occurredAt: new Date(at.getTime()),
    amount: { value: 12_345n, scale: 2, asset: 'USD' },
    baseValue: 12_345n,
    cash: false,
    counterparty,
    counterpartyCountry: 'GB',
    corridor: null,
  });

  it("give a movement's legs one instant and one amount, with their values unchanged", async () => {
    const payer: Subject = { tenantId: 'tenant-a', kind: 'account', id: 'A-1' };
    const payee: Subject = { tenantId: 'tenant-a', kind: 'account', id: 'A-2' };
    const { cursor } = await store.recordedSince(['tenant-a'], null);
    await store.record([leg(payer, 'out', 'account:A-2'), leg(payee, 'in', 'account:A-1')]);
    const news = await store.recordedSince(['tenant-a'], cursor);
    const [a, b] = news.activities.map((n) => n.activity);
    expect(a!.occurredAt).toBe(b!.occurredAt);
    expect(a!.amount).toBe(b!.amount);
    expect(a!.movementId).toBe(b!.movementId);
    for (const activity of [a!, b!]) {
      expect(activity.occurredAt.getTime()).toBe(at.getTime());
      expect(activity.amount).toEqual({ value: 12_345n, scale: 2, asset: 'USD' });
      expect(activity.baseValue).toBe(12_345n);
      expect(activity.counterpartyCountry).toBe('GB');
    }
    const [snapshot] = await store.snapshots([{ subject: payer, at }], 100);
    expect(snapshot!.rows.map((r) => [r.movementId, r.direction, r.amount.value, r.baseValue])).toEqual([['m-shared', 'out', 12_345n, 12_345n]]);
  });
});
