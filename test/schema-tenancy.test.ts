// Every tenant-owned row says whose it is, and a row of one tenant can never point at a row of
// another: every tenant-owned table has a key that includes tenant_id, and every foreign key between
// tenant-owned tables matches on tenant_id as well as the id.
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

// Tenant-owned tables with no key at all, each with the reason.
const KEYLESS = new Map<string, string>([['outbox', "the processing log: read only through outbox_log, its rows numbered by an identity column (0033)"]]);

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

interface TableKeys {
  table: string;
  // Each unique index's columns, "partial" after one that holds only some rows.
  keys: string[];
}

// Every table's unique indexes (primary keys and unique constraints are backed by one each).
async function keysByTable(): Promise<TableKeys[]> {
  const { rows } = await db.pool.query<TableKeys>(
    `SELECT c.relname AS table,
            array(SELECT array_to_string(array(SELECT coalesce(a.attname::text, 'expression') FROM unnest(i.indkey) WITH ORDINALITY k(n, o)
                                                 LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n ORDER BY k.o), ', ')
                         || CASE WHEN i.indpred IS NULL THEN '' ELSE ' partial' END
                    FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique ORDER BY i.indisprimary DESC, i.indexrelid) AS keys
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'schema_migrations'
      ORDER BY c.relname`,
  );
  return rows;
}

// A key naming the tenant is one no row of another tenant can share, and what a composite
// foreign key references. A partial unique index is no key: it holds only some rows.
function withoutTenantKey(tables: TableKeys[]): string[] {
  return tables
    .filter((t) => !SHARED.has(t.table) && !KEYLESS.has(t.table))
    .filter((t) => !t.keys.some((key) => !key.endsWith(' partial') && key.split(', ').includes('tenant_id')))
    .map((t) => `${t.table}: keys ${t.keys.map((key) => (key.endsWith(' partial') ? `(${key.slice(0, -' partial'.length)}) partial` : `(${key})`)).join(', ')}`);
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

  it('every tenant-owned table but the log has a primary or unique key that includes tenant_id', async () => {
    const tables = await keysByTable();
    expect(tables.length).toBeGreaterThan(40);
    expect(withoutTenantKey(tables)).toEqual([]);
    // The log is keyless on purpose (decision 0045); a key on it is one more index entry per accepted event.
    expect(tables.filter((t) => KEYLESS.has(t.table)).map((t) => [t.table, t.keys])).toEqual([...KEYLESS.keys()].map((table) => [table, []]));
  });

  it('the key sweep finds a table whose only key is a global id, and only until a key names the tenant', async () => {
    await db.pool.query('CREATE TABLE tenancy_probe (id uuid PRIMARY KEY, tenant_id text NOT NULL, note text)');
    await db.pool.query(`CREATE UNIQUE INDEX tenancy_probe_partial ON tenancy_probe (tenant_id, id) WHERE note IS NULL`);
    try {
      expect(withoutTenantKey(await keysByTable())).toEqual(['tenancy_probe: keys (id), (tenant_id, id) partial']);
      await db.pool.query('ALTER TABLE tenancy_probe ADD CONSTRAINT tenancy_probe_tenant_id UNIQUE (id, tenant_id)');
      expect(withoutTenantKey(await keysByTable())).toEqual([]);
    } finally {
      await db.pool.query('DROP TABLE tenancy_probe');
    }
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
