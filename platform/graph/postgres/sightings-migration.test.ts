// Migration 0056 on a graph written before it: the sightings of the events the graph applied are
// found in the canonical store, and observed edges become the sum of them (those of corrected
// movements given back). The graph is seeded as the code before 0056 wrote it.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { listMigrations } from '../../postgres/migrate.ts';
import { PostgresGraphStore } from './store.ts';
import { day } from '../contract.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

const T = 'acme';

async function movement(id: string, event: string, at: Date, status: string, legs: [string | null, string | null, string | null, string | null], data: object) {
  await db.pool.query(
    `INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status, amount_value, amount_asset, amount_scale,
                                      debit_account_id, debit_party_id, credit_account_id, credit_party_id, data)
     VALUES ($1, $2, $3, $4, $4, 'p2p', $5, 100, 'USD', 2, $6, $7, $8, $9, $10)`,
    [T, id, event, at, status, ...legs, JSON.stringify(data)],
  );
}

it('finds the sightings of applied events, and gives back those of corrected movements', async () => {
  const migration = (await listMigrations()).find((m) => m.version === 56)!;
  await db.pool.query('DROP TABLE graph_sightings');
  const ev = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  // m1 (corrected away) and m2 saw device D and instrument I; m3 failed; m4 was not applied yet;
  // c1, a control event on account A1, saw ip X through A1's holder P1.
  await movement('m1', ev(1), day(1), 'completed', ['A1', 'P1', 'A2', 'P2'], { device_ref_hash: 'D', instrument_ref: 'I' });
  await movement('m2', ev(2), day(3), 'pending', [null, 'P1', 'A2', 'P2'], { device_ref_hash: 'D', instrument_ref: 'I', ip_hash: 7 });
  await movement('m3', ev(3), day(4), 'failed', ['A1', 'P1', 'A2', 'P2'], { device_ref_hash: 'D' });
  await movement('m4', ev(4), day(5), 'completed', ['A1', 'P1', 'A2', 'P2'], { device_ref_hash: 'D' });
  await db.pool.query(
    `INSERT INTO canonical_control_events (tenant_id, external_id, event_id, occurred_at, received_at, type, subject_kind, subject_external_id, data)
     VALUES ($1, 'c1', $2, $3, $3, 'login', 'account', 'A1', '{"ip_hash": "X"}')`,
    [T, ev(5), day(2)],
  );
  await db.pool.query(
    `INSERT INTO canonical_entities (tenant_id, object, external_id, sequence, event_id, occurred_at, received_at, data)
     VALUES ($1, 'account', 'A1', 1, $2, $3, $3, '{"holder_party_id": "P1"}')`,
    [T, ev(6), day(1)],
  );
  await db.pool.query(`INSERT INTO graph_applied (tenant_id, event_id) SELECT $1, unnest($2::uuid[])`, [T, [ev(1), ev(2), ev(3), ev(5), ev(6)]]);
  await db.pool.query(`INSERT INTO graph_retracted (tenant_id, movement_id) VALUES ($1, 'm1')`, [T]);
  // The edges as the code before 0056 kept them: m1's sightings still counted.
  await db.pool.query(
    `INSERT INTO graph_edges (tenant_id, src_kind, src_key, type, dst_kind, dst_key, count, first_at, last_at)
     VALUES ($1, 'party', 'P1', 'shares', 'device', 'D', 2, $2, $3), ($1, 'account', 'A1', 'uses', 'instrument', 'I', 1, $2, $2),
            ($1, 'party', 'P1', 'uses', 'instrument', 'I', 1, $3, $3), ($1, 'party', 'P1', 'shares', 'ip', 'X', 1, $4, $4)`,
    [T, day(1), day(3), day(2)],
  );

  await db.pool.query(await readFile(migration.path, 'utf8'));

  const { rows } = await db.pool.query(
    `SELECT src_kind || ':' || src_key || ' ' || type || ' ' || dst_kind || ':' || dst_key || ' ' || coalesce(movement_id, '-') AS sighting
       FROM graph_sightings WHERE tenant_id = $1 ORDER BY 1`,
    [T],
  );
  expect(rows.map((r) => r.sighting)).toEqual(['party:P1 shares device:D m2', 'party:P1 shares ip:X -', 'party:P1 uses instrument:I m2']);
  const network = await new PostgresGraphStore(db.pool).egoNetwork(T, { kind: 'party', key: 'P1' }, { depth: 2, nodeCap: 10 });
  expect(network.edges.map((e) => `${e.id} ${e.count} ${e.firstAt?.toISOString()} ${e.lastAt?.toISOString()}`).sort()).toEqual([
    `shares:party:P1>device:D 1 ${day(3).toISOString()} ${day(3).toISOString()}`,
    `shares:party:P1>ip:X 1 ${day(2).toISOString()} ${day(2).toISOString()}`,
    `uses:party:P1>instrument:I 1 ${day(3).toISOString()} ${day(3).toISOString()}`,
  ]);
  // m1 alone had A1 use I: the edge went with it.
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM graph_edges WHERE tenant_id = $1 AND src_key = 'A1'`, [T])).rows[0].n).toBe(0);
});
