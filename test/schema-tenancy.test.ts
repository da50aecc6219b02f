// Every tenant-owned row says whose it is, and a row of one tenant can never point at a row of
// another: every foreign key between tenant-owned tables matches on tenant_id as well as the id.
// Read from the catalog of a freshly migrated database, so a new table or foreign key that
// forgets the tenant fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/test-database.ts';

// Tables that belong to no tenant, each with the reason.
const SHARED = new Map<string, string>([
  ['tenants', 'the list of tenants itself'],
  ['fx_rate_files', 'reference data the operator loads for every tenant'],
  ['fx_rates', 'reference data the operator loads for every tenant'],
  ['consumer_offsets', "the embedded log's consumer groups, which read every tenant's records"],
  ['consumer_members', "the embedded log's consumer groups, which read every tenant's records"],
]);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

interface ForeignKey {
  name: string;
  from: string;
  to: string;
  columns: string[];
  referenced: string[];
}

async function foreignKeys(): Promise<ForeignKey[]> {
  const { rows } = await db.pool.query<ForeignKey>(
    `SELECT c.conname AS name, c.conrelid::regclass::text AS from, c.confrelid::regclass::text AS to,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
            array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS referenced
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = current_schema() AND c.contype = 'f'`,
  );
  return rows;
}

describe('tenancy in the schema', () => {
  it('every table but the shared ones has a tenant_id that is never null', async () => {
    const { rows } = await db.pool.query<{ table: string; tenant: string | null }>(
      `SELECT c.relname AS table, (SELECT a.attnotnull::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS tenant
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'schema_migrations'`,
    );
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.filter((r) => !SHARED.has(r.table) && r.tenant !== 'true').map((r) => `${r.table}: ${r.tenant === null ? 'no tenant_id' : 'nullable'}`)).toEqual([]);
  });

  it('every foreign key between tenant-owned tables matches tenant_id to tenant_id', async () => {
    const between = (await foreignKeys()).filter((fk) => !SHARED.has(fk.from) && !SHARED.has(fk.to));
    expect(between.length).toBeGreaterThan(10);
    const unmatched = between.filter((fk) => fk.referenced[fk.columns.indexOf('tenant_id')] !== 'tenant_id');
    expect(unmatched.map((fk) => `${fk.name}: ${fk.from}(${fk.columns.join(', ')}) -> ${fk.to}(${fk.referenced.join(', ')})`)).toEqual([]);
  });

  it("refuses a console session of one tenant for another tenant's user", async () => {
    await db.pool.query(`INSERT INTO tenants (tenant_id, base_asset, created_at) VALUES ('ta', 'USD', now()), ('tb', 'USD', now()) ON CONFLICT DO NOTHING`);
    const { rows } = await db.pool.query<{ user_id: string }>(
      `INSERT INTO console_users (tenant_id, user_id, email, role, password_hash, created_at)
       VALUES ('ta', gen_random_uuid(), 'a@example.com', 'analyst', 'x', now()) RETURNING user_id`,
    );
    const session = (tenant: string, seed: string) =>
      db.pool.query(
        `INSERT INTO console_sessions (session_id, user_id, tenant_id, csrf_hash, created_at, last_seen_at, expires_at)
         VALUES (sha256($3::bytea), $1, $2, sha256('csrf'::bytea), now(), now(), now() + interval '1 hour')`,
        [rows[0]!.user_id, tenant, seed],
      );
    await session('ta', 'own');
    await expect(session('tb', 'other')).rejects.toMatchObject({ code: '23503', constraint: 'console_sessions_owner' });
  });
});
