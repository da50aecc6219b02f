import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { runSvc } from '../../../test/support/svc-process.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { findReportingEntity } from '../../console/case-exports/reporting-entity.ts';

// `svc goaml` as an operator runs it, against a test database.
let db: TestDatabase;
let env: NodeJS.ProcessEnv;
let dir: string;

const ENTITY = {
  rentity_id: 4711,
  rentity_branch: 'Head office',
  institution_name: 'Example Payments Ltd',
  institution_code: 'EXPLGB2L',
  country_code: 'GB',
  reporting_person: { first_name: 'Rita', last_name: 'Reporter' },
  location: { type: '1', address: '1 Example Street', city: 'London' },
  lookups: { transmode: { wire: 'B' } },
};

beforeAll(async () => {
  db = await createTestDatabase();
  await createTenant(db.pool, 'acme', 'USD');
  const { SVC_DATA_DIR: _ignored, ...rest } = process.env;
  env = { ...rest, DATABASE_URL: db.url, SVC_MASTER_KEY: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn' };
  dir = await mkdtemp(join(tmpdir(), 'svc-goaml-'));
}, 120_000);
afterAll(async () => {
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, value: unknown) => {
  const path = join(dir, name);
  await writeFile(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

describe('svc goaml', () => {
  it('sets a tenant\'s reporting entity from a file and shows it', async () => {
    expect((await runSvc(['goaml', 'show', '--tenant', 'acme'], env)).code).toBe(2);
    const set = await runSvc(['goaml', 'set', '--tenant', 'acme', '--file', await file('entity.json', ENTITY)], env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ ...ENTITY, lookups: { transmode: { wire: 'B' }, funds: {}, indicators: {} } });
    expect((await findReportingEntity(db.pool, 'acme'))?.rentity_id).toBe(4711);
    // Set again: replaced.
    const again = await runSvc(['goaml', 'set', '--tenant', 'acme', '--file', await file('entity2.json', { ...ENTITY, rentity_id: 9 })], env);
    expect(again.code, again.stderr).toBe(0);
    const shown = await runSvc(['goaml', 'show', '--tenant', 'acme'], env);
    expect(JSON.parse(shown.stdout).rentity_id).toBe(9);
  });

  it('refuses a bad file with the field paths, and an unknown tenant, changing nothing', async () => {
    const bad = await runSvc(['goaml', 'set', '--tenant', 'acme', '--file', await file('bad.json', { ...ENTITY, rentity_id: 0, country_code: 'gb' })], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('rentity_id');
    expect(bad.stderr).toContain('country_code');
    const notJson = await runSvc(['goaml', 'set', '--tenant', 'acme', '--file', await file('x.json', '{nope')], env);
    expect(notJson.code).toBe(2);
    const unknown = await runSvc(['goaml', 'set', '--tenant', 'nobody', '--file', await file('ok.json', ENTITY)], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no tenant nobody');
    expect(await findReportingEntity(db.pool, 'nobody')).toBeUndefined();
    // Shown for a tenant that does not exist: that, not advice to set one up.
    const shown = await runSvc(['goaml', 'show', '--tenant', 'nobody'], env);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toMatch(/^svc: no tenant nobody/);
    expect((await runSvc(['goaml', 'set', '--tenant', 'acme'], env)).code).toBe(2);
  });
});
