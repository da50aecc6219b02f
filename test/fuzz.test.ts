import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemSchema } from '../schemas/problem.ts';
import { dryRunResponseSchema } from '../schemas/responses.ts';
import { VALID_EVENTS } from './fixtures/events.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

// Bad input never yields a 500: thousands of random mutations of valid signed requests (bodies,
// headers, paths, methods), each answered by a governed problem or a success.
const MUTATIONS = 10_000;
const CONCURRENCY = 50;
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ SVC_MAX_BODY_BYTES: '65536', SVC_RATE_LIMIT_CAPACITY: '1000000000' });
});
afterAll(async () => api?.close());

// mulberry32: a small seeded generator so a failure can be replayed with FUZZ_SEED.
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

type Rng = ReturnType<typeof generator>;

const STRANGE_VALUES: unknown[] = [
  null, true, false, 0, -1, 1.5, 1e308, -0, '', ' ', 'x'.repeat(1200), '4111 1111 1111 1111', '4111-1111-1111-1111',
  '\u0000', '\ud800', 'a\udfffb', '\ud83d\ude00', '\u202e', '2026-09-01', '2026-09-01T12:00:00', '2026-09-01t12:00:00z', '1788264000',
  '2099-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '-12', '12.50', 'USD', 'X-', 'X-ABCDEFGHIJK', [], [1, 2], {}, { value: 1 },
  { kind: 'party' }, { __proto__: { polluted: true } }, 'constructor', '__proto__', '%00', '../../etc/passwd', 'NaN',
];

function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

// A JSON object or array, walked by member name or index.
type Container = Record<string | number, unknown>;
const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;
const valueAt = (root: unknown, path: (string | number)[]): unknown => path.reduce<unknown>((node, key) => (isContainer(node) ? node[key] : undefined), root);

function setAt(root: unknown, path: (string | number)[], value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const node = valueAt(root, path.slice(0, -1));
  if (!isContainer(node)) throw new Error(`nothing to change at ${path.join('.')}`);
  const last = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = value;
  return root;
}

function validBody(rng: Rng): unknown {
  const families = Object.entries(VALID_EVENTS);
  const item = () => {
    const [object, make] = rng.pick(families);
    return { object, event: (make as () => unknown)() };
  };
  return rng.next() < 0.5 ? item() : { events: Array.from({ length: 1 + rng.int(4) }, item) };
}

function mutateJson(rng: Rng, body: unknown): unknown {
  const steps = 1 + rng.int(3);
  for (let i = 0; i < steps; i++) {
    const all = paths(body);
    const path = rng.pick(all);
    const op = rng.int(4);
    if (op === 0 && path.length > 0) body = setAt(body, path, undefined, true);
    else if (op === 1) body = setAt(body, path, structuredClone(rng.pick(STRANGE_VALUES)));
    else if (op === 2) {
      const target = valueAt(body, path);
      if (isContainer(target) && !Array.isArray(target)) target[rng.pick(['extra', 'received_at', 'Data', ''])] = structuredClone(rng.pick(STRANGE_VALUES));
      // Cloned like every value put in: a later step may mutate it, and a STRANGE_VALUES entry
      // mutated in place could come back inside itself (seed 14326 built a circular body).
      else body = setAt(body, path, { nested: { deeper: [structuredClone(rng.pick(STRANGE_VALUES))] } });
    } else {
      const target = valueAt(body, path);
      if (Array.isArray(target)) for (let n = 0; n < 25; n++) target.push(structuredClone(target[0] ?? null));
      else body = setAt(body, path, 'y'.repeat(rng.int(3000)));
    }
  }
  return body;
}

function mutateBytes(rng: Rng, bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  const op = rng.int(3);
  if (op === 0) return copy.subarray(0, rng.int(copy.length));
  if (op === 1) {
    for (let i = 0; i < 1 + rng.int(5); i++) copy[rng.int(copy.length)] = rng.int(256);
    return copy;
  }
  const at = rng.int(copy.length);
  return Buffer.concat([copy.subarray(0, at), Buffer.from(rng.pick(['{', '}', '[', ']', ',', '"', '\\', ':', 'null', '\u00ff'])), copy.subarray(at)]);
}

const PATHS = [
  '/v1/validate', '/v1/validate/', '/v1//validate', '/v1/validate?x=1&x=2', '/v1/validate?%zz=%', '/v1/Validate',
  '/v1/%76alidate', '/v1/validate#frag', '/v1/parties', '/v1/events/evt_123', '/v1/unknown', '/', '/health?x=1',
  '/v1/validate?' + 'a=1&'.repeat(200), '/v1/' + 'x'.repeat(3000), '/v1/%', '/v1/%E0%A4%A', '/docs/json', '/openapi.json',
];
const METHODS = ['POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''];

interface Case {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: Buffer;
}

function makeCase(rng: Rng): Case {
  const key = rng.pick([api.keys.ingest, api.keys.ingest, api.keys.read, api.keys.read, api.keys.webhook_mgmt]);
  let method = 'POST';
  let url = '/v1/validate';
  let payload: Buffer | undefined = Buffer.from(JSON.stringify(validBody(rng)));
  const kind = rng.int(5);
  if (kind === 0) payload = Buffer.from(JSON.stringify(mutateJson(rng, JSON.parse(payload.toString()))) ?? '');
  else if (kind === 1) payload = mutateBytes(rng, payload);
  else if (kind === 2) {
    method = rng.pick(METHODS);
    url = rng.pick(PATHS);
    if (method === 'GET' || method === 'HEAD') payload = undefined;
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...api.client.headersFor({ method, url, body: payload ?? '', key }),
  };
  if (kind === 3) {
    // Header damage after signing.
    const name = rng.pick(['Svc-Key-Id', 'Svc-Timestamp', 'Svc-Nonce', 'Svc-Signature', 'content-type', 'Svc-Correlation-Id', 'Idempotency-Key', 'Signature-Input']);
    const value = rng.pick(['', ' ', 'x', 'v1=' + 'g'.repeat(64), '9'.repeat(20), '-1', 'a'.repeat(300), rng.pick(CONTENT_TYPES)]);
    if (rng.next() < 0.3) delete headers[name];
    else headers[name] = value;
  } else if (kind === 4) {
    headers['content-type'] = rng.pick(CONTENT_TYPES);
    if (headers['content-type'] === '') delete headers['content-type'];
  }
  return { method, url, headers, payload };
}

describe('fuzz: bad input never yields a 500', () => {
  it(`answers ${MUTATIONS} mutated requests with governed problems or successes (seed ${SEED})`, async () => {
    const rng = generator(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (let done = 0; done < MUTATIONS; done += CONCURRENCY) {
      const cases = Array.from({ length: Math.min(CONCURRENCY, MUTATIONS - done) }, () => makeCase(rng));
      const responses = await Promise.all(cases.map((c) => api.app.inject({ method: c.method, url: c.url, headers: c.headers, ...(c.payload ? { payload: c.payload } : {}) })));
      responses.forEach((res, i) => {
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const c = cases[i]!;
        const where = `${c.method} ${c.url.slice(0, 80)} -> ${res.statusCode}`;
        if (res.statusCode >= 500) return failures.push(`${where}: ${res.body.slice(0, 200)}`);
        if (c.method === 'HEAD') return;
        if (res.statusCode >= 400 && res.statusCode !== 422) {
          if (!String(res.headers['content-type']).startsWith('application/problem+json')) return failures.push(`${where}: not a problem`);
          const parsed = problemSchema.safeParse(res.json());
          if (!parsed.success || parsed.data.status !== res.statusCode) failures.push(`${where}: malformed problem ${res.body.slice(0, 200)}`);
        } else if (c.url.startsWith('/v1/validate') && (res.statusCode === 200 || res.statusCode === 422)) {
          if (!dryRunResponseSchema.safeParse(res.json()).success) failures.push(`${where}: malformed dry-run response`);
        }
      });
    }
    if (process.env.FUZZ_VERBOSE) console.log(Object.fromEntries(statuses));
    expect(failures.slice(0, 20)).toEqual([]);
    // The mutations reach every layer: successes, validation failures and auth failures all occur.
    expect(statuses.get(200)).toBeGreaterThan(0);
    expect(statuses.get(422)).toBeGreaterThan(0);
    expect(statuses.get(401)).toBeGreaterThan(0);
    expect(statuses.get(400)).toBeGreaterThan(0);
  }, 300_000);
});
