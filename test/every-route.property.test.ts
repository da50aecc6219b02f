// For generated requests on every route of the API (as its OpenAPI document lists them), signed
// with a key of any scope, the answer is a success or a governed problem: never a 5xx, and every
// 4xx is application/problem+json with the catalog's status. Path parameters, query strings and
// bodies are generated (fast-check): ids valid and not, unicode, extreme lengths, deep nesting,
// leap seconds and odd offsets, numbers past every bound.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { problemSchema } from '../schemas/problem.ts';
import { VALID_EVENTS } from './fixtures/events.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';

let api: TestApi;
let routes: Array<{ method: string; path: string }>;
beforeAll(async () => {
  api = await startTestApi({ SVC_MAX_BODY_BYTES: '262144', SVC_RATE_LIMIT_CAPACITY: '1000000000' });
  const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  routes = Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).filter((m) => m !== 'parameters').map((method) => ({ method: method.toUpperCase(), path })));
});
afterAll(async () => api?.close());

const oddInstant = fc.constantFrom('2016-12-31T23:59:60Z', '2026-09-01T00:00:00+23:59', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-23:59', '2026-09-01T12:00:00.123456789Z', '2026-13-01T00:00:00Z');
const oddString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  oddInstant,
  fc.constantFrom('', ' ', '\u0000', '\ud800', 'evt_00000000-0000-4000-8000-000000000000', 'epsd_x', '-1', '1e309', 'x'.repeat(70_000), '__proto__', '%', '../..'),
);
const oddNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, 2 ** 53, -(2 ** 53), 1e308));
// Arrays nested `depth` levels, written only into the body's text (serialise): fast-check prints
// generated values recursively, and JSON.stringify walks them recursively too.
class Nested {
  constructor(readonly depth: number) {}
  toJSON(): string {
    return `\u0000nested:${this.depth}\u0000`;
  }
  [fc.toStringMethod](): string {
    return `Nested(${this.depth})`;
  }
}
const serialise = (payload: unknown): string =>
  (JSON.stringify(payload) ?? 'null').replace(/"\\u0000nested:(\d+)\\u0000"/g, (_all, depth: string) => `${'['.repeat(Number(depth))}${']'.repeat(Number(depth))}`);
const deep = fc.integer({ min: 33, max: 5_000 }).map((depth) => new Nested(depth));
const oddValue: fc.Arbitrary<unknown> = fc.oneof(oddString, oddNumber, fc.boolean(), fc.constant(null), deep, fc.jsonValue({ maxDepth: 4 }));
// A valid event with one member replaced, or anything at all.
const body = fc.oneof(
  fc.tuple(fc.constantFrom(...Object.keys(VALID_EVENTS)), fc.constantFrom('occurred_at', 'external_id', 'sequence', 'data', 'schema_version'), oddValue).map(([object, member, value]) => {
    const event = (VALID_EVENTS as Record<string, () => Record<string, unknown>>)[object]!();
    return { object, event: { ...event, [member]: value } };
  }),
  oddValue,
  fc.dictionary(oddString, oddValue, { maxKeys: 5 }),
);

// Lone surrogates become U+FFFD, as any HTTP client sends them.
const wellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

it('answers every route with a success or a governed problem, never a 5xx', async () => {
  const scopes = Object.keys(api.keys) as Array<keyof TestApi['keys']>;
  const statuses = new Map<number, number>();
  const reached = new Set<string>();
  await fc.assert(
    fc.asyncProperty(
      fc.nat(),
      fc.constantFrom(...scopes),
      fc.array(oddString, { minLength: 3, maxLength: 3 }),
      fc.dictionary(fc.constantFrom('limit', 'cursor', 'from', 'to', 'status', 'severity', 'depth', 'as_of', 'kind', 'x'), oddString, { maxKeys: 3 }),
      body,
      async (pick, scope, params, query, payload) => {
        const route = routes[pick % routes.length]!;
        let n = 0;
        const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(wellFormed(params[n++ % params.length]!)));
        const search = new URLSearchParams(query).toString();
        const url = `${path}${search ? `?${search}` : ''}`;
        const withBody = route.method !== 'GET' && route.method !== 'HEAD' && route.method !== 'DELETE';
        const text = withBody ? serialise(payload) : '';
        const res = await api.client.send({ method: route.method, url, body: text, key: api.keys[scope] });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode !== 401 && res.statusCode !== 403) reached.add(`${route.method} ${route.path}`);
        const where = `${route.method} ${url.slice(0, 120)} -> ${res.statusCode}: ${res.body.slice(0, 300)}`;
        expect(res.statusCode, where).toBeLessThan(500);
        if (res.statusCode >= 400 && res.statusCode !== 422) {
          expect(String(res.headers['content-type']), where).toMatch(/^application\/problem\+json/);
          expect(problemSchema.parse(res.json()).status, where).toBe(res.statusCode);
        }
      },
    ),
    { numRuns: 1_500, seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
  );
  expect(routes.length).toBeGreaterThan(30);
  // The requests got past authentication on most routes, and were both taken and refused.
  expect(reached.size).toBeGreaterThan(routes.length / 2);
  expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
  expect(statuses.get(400)).toBeGreaterThan(0);
}, 300_000);
