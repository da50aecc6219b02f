import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { movementMapping } from '../../test/fixtures/import-mappings.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcClient } from '../../clients/typescript/src/index.ts';
import { runSvc, startSvcUp, type SvcUp } from '../../test/support/svc-process.ts';

// `svc import` as a customer's operator runs it: against a running `svc up`, through the public
// API only, with an ingest key issued by the CLI.

let dataDir: string;
let env: NodeJS.ProcessEnv;
let server: SvcUp | undefined;
let baseUrl: string;
let key: { key_id: string; secret: string };

const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runSvc(args, { ...env, ...extraEnv });

async function getImport(id: string): Promise<Record<string, unknown>> {
  return { ...(await new SvcClient({ baseUrl, keyId: key.key_id, secret: key.secret }).imports.retrieve(id)) };
}

const mapping = movementMapping({ kind: 'csv' }, {
  'data.debit.account_id': { from: 'from' },
  'data.credit.account_id': { from: 'to' },
  'data.memo': { from: 'memo', optional: true },
});

// Eight rows over several 200-byte chunks: a memo with line breaks, a delimiter and doubled
// quotes (never split), CRLF line ends, and one bad amount.
const CSV_FILE = [
  'id,at,amount,from,to,memo',
  'cli-1,2025-03-01T10:00:00Z,10.00,a-1,a-2,"rent for\nMarch, ""flat 2""\r\nsecond floor"',
  'cli-2,2025-03-02T10:00:00Z,oops,a-1,a-2,bad amount',
  'cli-3,2025-03-03T10:00:00Z,3.50,a-2,a-3,',
  'cli-4,2025-03-04T10:00:00Z,4.00,a-3,a-1,"one\nmore\nmulti-line memo, quoted ""twice"""',
  'cli-5,2025-03-05T10:00:00Z,5.25,a-1,a-3,groceries',
  'cli-6,2025-03-06T10:00:00Z,6.00,a-2,a-1,"comma, inside"',
  'cli-7,2025-03-07T10:00:00Z,7.00,a-3,a-2,',
  'cli-8,2025-03-08T10:00:00Z,8.00,a-1,a-2,last',
].join('\r\n') + '\r\n';
const WINDOW = ['--go-live', '2025-06-01T00:00:00Z', '--backfill-from', '2025-01-01T00:00:00Z'];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-import-cli-'));
  await chmod(dataDir, 0o755);
  const { DATABASE_URL: _ignored, SVC_MASTER_KEY: _alsoIgnored, SVC_URL: _u, SVC_KEY_ID: _k, SVC_KEY_SECRET: _s, ...rest } = process.env;
  env = { ...rest, SVC_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };

  server = await startSvcUp(env);
  baseUrl = server.baseUrl;

  expect((await run(['tenants', 'create', 'acme', '--base-asset', 'USD'])).code).toBe(0);
  const issued = await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'ingest', '--json']);
  expect(issued.code, issued.stderr).toBe(0);
  key = JSON.parse(issued.stdout);
  await writeFile(join(dataDir, 'movements.csv'), CSV_FILE);
  await writeFile(join(dataDir, 'mapping.json'), JSON.stringify(mapping));
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }); // the server may still be writing its last WAL
});

describe('svc import', () => {
  it('uploads a CSV in record-boundary chunks, lands it, and writes the reject report next to it', async () => {
    const file = join(dataDir, 'movements.csv');
    const result = await run(
      ['import', '--mapping', join(dataDir, 'mapping.json'), '--file', file, '--chunk-bytes', '200', ...WINDOW],
      { SVC_URL: baseUrl, SVC_KEY_ID: key.key_id, SVC_KEY_SECRET: key.secret },
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^import imp_[0-9a-f-]{36} completed$/m);
    expect(result.stdout).toMatch(/^ {2}rows read {3}8$/m);
    expect(result.stdout).toMatch(/^ {2}accepted {4}7$/m);
    expect(result.stdout).toMatch(/^ {2}duplicates {2}0$/m);
    expect(result.stdout).toMatch(/^ {2}rejected {4}1$/m);
    expect(result.stdout).toMatch(/^ {2}skipped {5}0$/m);
    const rejectsPath = `${file}.rejects.csv`;
    expect(result.stdout).toContain(`1 rejected row: report written to ${rejectsPath}`);
    // Progress went to stderr as plain lines (not a terminal); the secret never appears.
    expect(result.stderr).toMatch(/uploaded 488 B of 488 B \(100%\), 3 chunks/);
    expect(result.stderr).toMatch(/completed: 3\/3 chunks landed, 8 rows read/);
    expect(result.stdout + result.stderr).not.toContain(key.secret);

    const id = /import (imp_\S+) completed/.exec(result.stdout)![1]!;
    const view = await getImport(id);
    expect(view).toMatchObject({ state: 'completed', rows_read: 8, accepted: 7, rejected: 1 });
    expect(view.chunk_count).toBe(3);

    const lines = (await readFile(rejectsPath, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('row_no,chunk_no,code,object_type,external_id,message,raw');
    expect(lines[1]).toBe('2,0,"svc:validation/schema","movement","cli-2","data.amount: not an amount","cli-2,2025-03-02T10:00:00Z,oops,a-1,a-2,bad amount"');
    await expect(stat(`${rejectsPath}.part`)).rejects.toThrow();
  }, 120_000);

  it('--dry-run prints the whole-file report, cancels the import and lands nothing', async () => {
    const result = await run([
      'import', '--mapping', join(dataDir, 'mapping.json'), '--file', join(dataDir, 'movements.csv'), '--dry-run', '--chunk-bytes', '200', ...WINDOW,
      '--url', baseUrl, '--key-id', key.key_id, '--key-secret', key.secret,
    ]);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
    const id = /^dry run of import (imp_\S+) \(movement, \d+ chunks\): nothing landed$/m.exec(result.stdout)?.[1];
    expect(id, result.stdout).toBeDefined();
    expect(result.stdout).toMatch(/^ {2}rows read {2}8$/m);
    expect(result.stdout).toMatch(/^ {2}valid {6}7$/m);
    expect(result.stdout).toMatch(/^ {2}rejected {3}1$/m);
    expect(result.stdout).toMatch(/^ {2}ROW\s+CHUNK\s+CODE\s+EXTERNAL ID\s+MESSAGE$/m);
    expect(result.stdout).toMatch(/^ {2}2\s+0\s+svc:validation\/schema\s+cli-2\s+data\.amount: \S/m);
    expect(result.stderr).toContain(`import ${id} cancelled`);
    expect(await getImport(id!)).toMatchObject({ state: 'cancelled', rows_read: 0, accepted: 0, chunks_landed: 0 });
  }, 120_000);

  it('prints API problems as code: detail with field paths, and usage problems, with exit code 2', async () => {
    const bad = join(dataDir, 'bad-mapping.json');
    await writeFile(bad, JSON.stringify({ ...mapping, fields: { ...mapping.fields, 'data.amout': { from: 'amount' } } }));
    const auth = { SVC_URL: baseUrl, SVC_KEY_ID: key.key_id, SVC_KEY_SECRET: key.secret };
    const refused = await run(['import', '--mapping', bad, '--file', join(dataDir, 'movements.csv'), ...WINDOW], auth);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('svc import: svc:validation/schema: the import is not valid');
    expect(refused.stderr).toMatch(/^ {2}mapping\.fields\.data\.amout: .*data\.amount/m);

    const tooBig = await run(['import', '--mapping', join(dataDir, 'mapping.json'), '--file', join(dataDir, 'movements.csv'), '--chunk-bytes', '60', ...WINDOW], auth);
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain('is larger than the chunk size (60 bytes)');
    expect(tooBig.stderr).toMatch(/import imp_\S+ cancelled/);

    const noFile = await run(['import', '--mapping', join(dataDir, 'mapping.json')], auth);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('--file is required');
    const noKey = await run(['import', '--mapping', join(dataDir, 'mapping.json'), '--file', join(dataDir, 'movements.csv')]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('SVC_KEY_ID');
  }, 120_000);
});
