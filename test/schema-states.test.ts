// The database holds each status column to its values (CHECK constraints, migration 0023) and
// every tenant-owned import row to its tenant. The lists in SQL mirror TypeScript constants; this
// test fails when one side gains a value the other lacks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MOVEMENT_STATUSES } from '../schemas/families/movement.ts';
import { RECONCILIATION_STATUSES } from '../schemas/reconciliations.ts';
import { CASE_STATUSES, DISPOSITIONS, EVENT_STATUSES, STAGE_STATUSES } from '../schemas/responses.ts';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

// The values a CHECK constraint admits, read back from the catalog.
async function checkedValues(table: string, constraint: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ def: string }>(
    `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.conname = $2 AND c.contype = 'c'`,
    [table, constraint],
  );
  expect(rows, `${table}.${constraint}`).toHaveLength(1);
  return [...rows[0]!.def.matchAll(/'([^']*)'::text/g)].map((m) => m[1]!).sort();
}

const sorted = (values: readonly string[]) => [...values].sort();

describe('status columns', () => {
  it.each([
    ['inbox_events', 'inbox_events_status', EVENT_STATUSES],
    ['event_stages', 'event_stages_status', STAGE_STATUSES],
    ['canonical_movements', 'canonical_movements_status', MOVEMENT_STATUSES],
    ['episodes', 'episodes_case_status', CASE_STATUSES],
    ['episodes', 'episodes_disposition', DISPOSITIONS],
    ['case_actions', 'case_actions_case_status', CASE_STATUSES],
    ['case_actions', 'case_actions_disposition', DISPOSITIONS],
    ['reconciliation_results', 'reconciliation_results_status', RECONCILIATION_STATUSES],
  ] as const)('%s (%s) admits exactly the values the code writes', async (table, constraint, values) => {
    expect(await checkedValues(table, constraint)).toEqual(sorted(values));
  });

  it('refuses a value outside the list', async () => {
    await expect(
      db.pool.query(`INSERT INTO event_stages (tenant_id, event_id, stage, status, at) VALUES ('acme', gen_random_uuid(), 'graph', 'done', now())`),
    ).rejects.toMatchObject({ code: '23514', constraint: 'event_stages_status' });
  });
});

describe('import rows', () => {
  it("carry their tenant, and cannot point at another tenant's import", async () => {
    await db.pool.query(`INSERT INTO tenants (tenant_id, base_asset, created_at) VALUES ('t1', 'USD', now()), ('t2', 'USD', now()) ON CONFLICT DO NOTHING`);
    const { rows } = await db.pool.query<{ import_id: string }>(
      `INSERT INTO imports (tenant_id, import_id, family, mapping, state, go_live_at, backfill_from, created_at, updated_at)
       VALUES ('t1', gen_random_uuid(), 'party', '{}', 'created', now(), now() - interval '1 day', now(), now()) RETURNING import_id`,
    );
    const importId = rows[0]!.import_id;
    await db.pool.query(`INSERT INTO import_chunks (tenant_id, import_id, chunk_no, body, sha256, uploaded_at) VALUES ('t1', $1, 0, '\\x00', '\\x00', now())`, [importId]);
    await expect(
      db.pool.query(`INSERT INTO import_chunks (tenant_id, import_id, chunk_no, body, sha256, uploaded_at) VALUES ('t2', $1, 1, '\\x00', '\\x00', now())`, [importId]),
    ).rejects.toMatchObject({ code: '23503', constraint: 'import_chunks_import' });
    await expect(
      db.pool.query(`INSERT INTO import_rejects (tenant_id, import_id, seq, chunk_no, code, message) VALUES ('t2', $1, 1, 0, 'x', 'y')`, [importId]),
    ).rejects.toMatchObject({ code: '23503', constraint: 'import_rejects_import' });
  });
});

describe('fx_rates', () => {
  it('holds a positive number, one per pair and instant within a file', async () => {
    const { rows } = await db.pool.query<{ type: string }>(`SELECT data_type AS type FROM information_schema.columns WHERE table_name = 'fx_rates' AND column_name = 'rate'`);
    expect(rows[0]!.type).toBe('numeric');
    const file = (await db.pool.query<{ id: string }>(`INSERT INTO fx_rate_files (file_id, name, sha256, row_count, loaded_at) VALUES (gen_random_uuid(), 'f', '\\x00', 1, now()) RETURNING file_id AS id`)).rows[0]!.id;
    const insert = (rate: string) =>
      db.pool.query(`INSERT INTO fx_rates (file_id, base, quote, rate, rate_scale, valid_from, loaded_at) VALUES ($1, 'EUR', 'USD', $2, 4, '2026-01-01T00:00:00Z', now())`, [file, rate]);
    await expect(insert('0')).rejects.toMatchObject({ code: '23514' });
    await insert('1.0825');
    await expect(insert('1.0900')).rejects.toMatchObject({ code: '23505', constraint: 'fx_rates_pkey' });
  });
});
