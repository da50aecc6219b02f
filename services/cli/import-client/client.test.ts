import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcApiError, type Import } from '../../../clients/typescript/src/index.ts';
import { movementMapping } from '../../../test/fixtures/import-mappings.ts';
import { importCommand } from '../commands/import.ts';
import { describeError, retryNotice } from './client.ts';

// What `svc import` decides on top of the SDK (whose signing and retry rules have tests of their
// own in clients/typescript): which of its calls may be repeated, how retries are announced, and
// how problems are worded. The service is a scripted fetch.

type Reply = Response | Error;

const problem = (status: number, code: string, detail: string, errors: Array<{ path: string; code: string; message: string }> = []) =>
  new Response(JSON.stringify({ type: 'about:blank', title: 'Problem', status, code, detail, instance: '/x', correlation_id: 'c', errors }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const reset = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
const refused = () => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), { code: 'ECONNREFUSED' }) });

function importView(overrides: Partial<Import> = {}): Import {
  return {
    import_id: 'imp_1',
    family: 'movement',
    state: 'created',
    go_live_at: '2025-06-01T00:00:00Z',
    backfill_from: '2025-01-01T00:00:00Z',
    chunk_count: null,
    chunks_landed: 0,
    rows_read: 0,
    accepted: 0,
    duplicates: 0,
    rejected: 0,
    skipped: 0,
    failure: null,
    warnings: [],
    created_at: '2025-06-01T00:00:00Z',
    updated_at: '2025-06-01T00:00:00Z',
    submitted_at: null,
    completed_at: null,
    ...overrides,
  };
}

const CSV = 'id,at,amount\nm-1,2025-03-01T10:00:00Z,10.00\nm-2,2025-03-02T10:00:00Z,oops\n';
const REJECTS = 'row_no,chunk_no,code,object_type,external_id,message,raw\n2,0,"svc:validation/schema","movement","m-2","data.amount: not an amount","m-2,2025-03-02T10:00:00Z,oops"\n';

let dir: string;
let mappingPath: string;
let csvPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-import-client-'));
  mappingPath = join(dir, 'mapping.json');
  csvPath = join(dir, 'movements.csv');
  await writeFile(mappingPath, JSON.stringify(movementMapping({ kind: 'csv' })));
  await writeFile(csvPath, CSV);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `svc import` against replies scripted per `METHOD /path` (each used once, in order). */
async function run(script: Record<string, Reply[]>, extraArgs: string[] = []) {
  const calls: Array<{ route: string; headers: Record<string, string>; body: string }> = [];
  const pauses: number[] = [];
  const stdout: string[] = [];
  let stderr = '';
  const fetch = (async (url: URL, init: RequestInit) => {
    const route = `${init.method} ${new URL(url).pathname}`;
    calls.push({ route, headers: init.headers as Record<string, string>, body: init.body ? Buffer.from(init.body as Uint8Array).toString('utf8') : '' });
    const next = script[route]?.shift();
    if (!next) throw new Error(`unscripted ${route}`);
    if (next instanceof Error) throw next;
    return next;
  }) as unknown as typeof globalThis.fetch;
  const code = await importCommand(['--mapping', mappingPath, '--file', csvPath, '--go-live', '2025-06-01T00:00:00Z', ...extraArgs], {
    print: (line) => stdout.push(line),
    progress: { write: (text: string) => (stderr += text) },
    env: { SVC_URL: 'http://api.test:8080', SVC_KEY_ID: 'svc_test_k', SVC_KEY_SECRET: Buffer.alloc(32, 7).toString('base64url') },
    http: {
      fetch,
      sleep: async (ms) => {
        pauses.push(ms);
      },
      random: () => 0.5,
    },
  });
  return { code, calls, pauses, stdout: stdout.join('\n'), stderr, left: Object.entries(script).filter(([, replies]) => replies.length > 0).map(([route]) => route) };
}

describe('svc import over the SDK', () => {
  it('retries chunk uploads and reads, announcing each retry, and streams the reject report to disk', async () => {
    const result = await run({
      'POST /v1/imports': [json(201, importView())],
      'PUT /v1/imports/imp_1/chunks/0': [problem(503, 'svc:internal/error', 'draining'), json(201, { chunk_no: 0, bytes: CSV.length, sha256: 'x' })],
      'POST /v1/imports/imp_1/submit': [json(202, importView({ state: 'submitted', chunk_count: 1 }))],
      'GET /v1/imports/imp_1': [reset(), json(200, importView({ state: 'completed', chunk_count: 1, chunks_landed: 1, rows_read: 2, accepted: 1, rejected: 1 }))],
      'GET /v1/imports/imp_1/rejects': [new Response(REJECTS, { status: 200, headers: { 'content-type': 'text/csv' } })],
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.left).toEqual([]);
    expect(result.calls.map((c) => c.route)).toEqual([
      'POST /v1/imports',
      'PUT /v1/imports/imp_1/chunks/0',
      'PUT /v1/imports/imp_1/chunks/0',
      'POST /v1/imports/imp_1/submit',
      'GET /v1/imports/imp_1',
      'GET /v1/imports/imp_1',
      'GET /v1/imports/imp_1/rejects',
    ]);
    // The chunk goes as its format's media type, signed; the same bytes on the retry.
    const puts = result.calls.filter((c) => c.route.startsWith('PUT'));
    expect(puts.map((c) => c.headers['content-type'])).toEqual(['text/csv', 'text/csv']);
    expect(puts.map((c) => c.body)).toEqual([CSV, CSV]);
    expect(puts[0]!.headers['Svc-Nonce']).not.toBe(puts[1]!.headers['Svc-Nonce']);
    expect(JSON.parse(result.calls[3]!.body)).toEqual({ chunk_count: 1 });
    expect(result.calls[6]!.headers.accept).toBe('text/csv');

    expect(result.pauses).toEqual([250, 250]);
    expect(result.stderr).toContain('PUT /v1/imports/imp_1/chunks/0: HTTP 503, retrying in 0.3 s (attempt 2)\n');
    expect(result.stderr).toContain('GET /v1/imports/imp_1: cannot reach http://api.test:8080 (reset): socket hang up, retrying in 0.3 s (attempt 2)\n');
    expect(result.stdout).toMatch(/^import imp_1 completed$/m);
    expect(result.stdout).toContain(`1 rejected row: report written to ${csvPath}.rejects.csv`);
    expect(await readFile(`${csvPath}.rejects.csv`, 'utf8')).toBe(REJECTS);
  });

  it('never repeats the keyless writes: a 429 or a refused connection on create ends the run with exit 2', async () => {
    const limited = await run({ 'POST /v1/imports': [problem(429, 'svc:rate_limit/exceeded', 'slow down'), json(201, importView())] });
    expect(limited.code).toBe(2);
    expect(limited.calls).toHaveLength(1);
    expect(limited.pauses).toEqual([]);
    expect(limited.stderr).toBe('svc import: svc:rate_limit/exceeded: slow down\n');

    const down = await run({ 'POST /v1/imports': [refused()] });
    expect(down.code).toBe(2);
    expect(down.calls).toHaveLength(1);
    expect(down.stderr).toBe('svc import: POST /v1/imports: cannot reach http://api.test:8080 (refused): connect ECONNREFUSED 127.0.0.1:8080\n');
  });

  it('does not repeat a failed submit: the import is cancelled and the run fails', async () => {
    const result = await run({
      'POST /v1/imports': [json(201, importView())],
      'PUT /v1/imports/imp_1/chunks/0': [json(201, { chunk_no: 0, bytes: CSV.length, sha256: 'x' })],
      'POST /v1/imports/imp_1/submit': [problem(503, 'svc:internal/error', 'draining')],
      'POST /v1/imports/imp_1/cancel': [json(200, importView({ state: 'cancelled' }))],
    });
    expect(result.code).toBe(2);
    expect(result.left).toEqual([]);
    expect(result.calls.filter((c) => c.route.endsWith('/submit'))).toHaveLength(1);
    expect(result.stderr).toContain('svc import: svc:internal/error: draining\nimport imp_1 cancelled\n');
  });

  it('--dry-run repeats the dry-run (it stores nothing), prints the report and cancels', async () => {
    const report = { family: 'movement', warnings: [], rows_read: 2, valid: 1, rejected: 1, skipped: 0, rejects: [{ row_no: 2, chunk_no: 0, code: 'svc:validation/schema', object_type: 'movement', external_id: 'm-2', message: 'data.amount: not an amount' }], rejects_truncated: false };
    const result = await run(
      {
        'POST /v1/imports': [json(201, importView())],
        'PUT /v1/imports/imp_1/chunks/0': [json(201, { chunk_no: 0, bytes: CSV.length, sha256: 'x' })],
        'POST /v1/imports/imp_1/dry-run': [new Response('bad gateway', { status: 502 }), json(200, report)],
        'POST /v1/imports/imp_1/cancel': [json(200, importView({ state: 'cancelled' }))],
      },
      ['--dry-run'],
    );
    expect(result.code, result.stderr).toBe(1);
    expect(result.left).toEqual([]);
    expect(result.stderr).toContain('POST /v1/imports/imp_1/dry-run: HTTP 502, retrying in 0.3 s (attempt 2)');
    expect(result.stdout).toMatch(/^dry run of import imp_1 \(movement, 1 chunk\): nothing landed$/m);
    expect(result.stderr).toContain('import imp_1 cancelled');
  });

  it('words an over-size chunk and a non-problem answer for the operator, and cancels', async () => {
    const tooBig = await run({
      'POST /v1/imports': [json(201, importView())],
      'PUT /v1/imports/imp_1/chunks/0': [problem(413, 'svc:request/payload_too_large', 'the body is over 4194304 bytes')],
      'POST /v1/imports/imp_1/cancel': [json(200, importView({ state: 'cancelled' }))],
    });
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain(`svc import: chunk 0 (${CSV.length} bytes) is over the server's payload cap: lower --chunk-bytes (svc:request/payload_too_large: the body is over 4194304 bytes)\n`);
    expect(tooBig.stderr).toContain('import imp_1 cancelled');

    const proxy = await run({
      'POST /v1/imports': [json(201, importView())],
      'PUT /v1/imports/imp_1/chunks/0': [new Response('<html>Not here</html>', { status: 404, headers: { 'content-type': 'text/html' } })],
      'POST /v1/imports/imp_1/cancel': [problem(409, 'svc:import/not_open', 'the import is landing')],
    });
    expect(proxy.code).toBe(2);
    expect(proxy.stderr).toContain('svc import: PUT /v1/imports/imp_1/chunks/0: 404 http_404: <html>Not here</html>\n');
    expect(proxy.stderr).toContain('import imp_1 could not be cancelled (svc:import/not_open: the import is landing); cancel it with POST /v1/imports/imp_1/cancel');
  });
});

describe('describeError', () => {
  const apiError = (problemDoc: object | undefined, status = 400) =>
    new SvcApiError({ status, problem: problemDoc as never, bodyExcerpt: 'excerpt', headers: new Headers(), retryAfterMs: undefined, attempts: 1, idempotencyKey: undefined, method: 'POST', path: '/v1/imports' });

  it('gives code: detail, then each field error with its path (and its code when it differs)', () => {
    const error = apiError({
      code: 'svc:validation/schema',
      status: 400,
      title: 'Invalid',
      detail: 'the import is not valid',
      errors: [
        { path: 'mapping.fields.data.amout', code: 'svc:validation/schema', message: 'not a target of movement; did you mean data.amount?' },
        { path: '', code: 'svc:request/bad_request', message: 'unexpected' },
      ],
    });
    expect(describeError(error)).toEqual([
      'svc:validation/schema: the import is not valid',
      '  mapping.fields.data.amout: not a target of movement; did you mean data.amount?',
      '  (body): unexpected (svc:request/bad_request)',
    ]);
  });

  it('falls back to the message, which names the request, for anything else', () => {
    expect(describeError(apiError(undefined, 502))).toEqual(['POST /v1/imports: 502 http_502: excerpt']);
    expect(describeError(new Error('disk full'))).toEqual(['disk full']);
  });
});

describe('retryNotice', () => {
  it('names the request once, the reason, the wait and the next attempt', () => {
    expect(retryNotice({ method: 'GET', path: '/v1/imports/imp_1', attempt: 2, delayMs: 1234, reason: 'HTTP 429' })).toBe('GET /v1/imports/imp_1: HTTP 429, retrying in 1.2 s (attempt 3)');
    expect(retryNotice({ method: 'GET', path: '/v1/imports/imp_1', attempt: 1, delayMs: 0, reason: 'GET /v1/imports/imp_1: no response from http://x in time' })).toBe(
      'GET /v1/imports/imp_1: no response from http://x in time, retrying in 0.0 s (attempt 2)',
    );
  });
});
