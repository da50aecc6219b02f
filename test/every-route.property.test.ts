// For generated requests on every route of the API (as its OpenAPI document lists them), signed
// with a key of any scope, the answer is a success or a governed problem: never a 5xx, and every
// 4xx is application/problem+json with the catalog's status. Path parameters, query strings and
// bodies are generated (fast-check): ids valid and not, unicode, extreme lengths, deep nesting,
// leap seconds and odd offsets, numbers past every bound.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { problemSchema } from '../schemas/problem.ts';
import { OCCURRED_AT, VALID_EVENTS, accountEvent, controlEventEvent, instrumentEvent, movementEvent, partyEvent, relationshipEvent } from './fixtures/events.ts';
import { oddInstants } from './support/odd-instants.ts';
import { startTestApi, type TestApi } from './support/test-api.ts';
import { startTestPipeline, type TestPipeline } from './support/test-pipeline.ts';

let api: TestApi;
let run: TestPipeline;
// A route with the query parameters its OpenAPI operation declares (date-time ones marked).
// The scope its summary names, when it names one ("... (scope read)").
let routes: Array<{ method: string; path: string; scope?: string; query: Array<{ name: string; instant: boolean }> }>;
type Operation = { summary?: string; parameters?: Array<{ in: string; name: string; schema?: { format?: string } }> };
// Ids that exist: a route answers an unknown id before it reads its query, so only a known one
// takes the query (a window, a cursor, a depth) as far as the store.
const KNOWN_IDS = ['party-1', 'party-2', 'acct-1', 'acct-2', 'inst-1', 'mv-1', 'rel-1', 'ce-1'];
beforeAll(async () => {
  api = await startTestApi({ SVC_MAX_BODY_BYTES: '262144', SVC_RATE_LIMIT_CAPACITY: '1000000000' });
  run = await startTestPipeline(api);
  const world = [
    { object: 'party', event: partyEvent('party-1') },
    { object: 'party', event: partyEvent('party-2') },
    { object: 'account', event: accountEvent('acct-1', 'party-1') },
    { object: 'account', event: accountEvent('acct-2', 'party-2') },
    { object: 'instrument', event: instrumentEvent('inst-1') },
    { object: 'movement', event: movementEvent('mv-1') },
    { object: 'relationship', event: relationshipEvent('rel-1') },
    { object: 'control_event', event: controlEventEvent('ce-1') },
  ];
  const seeded = await api.client.post('/v1/batches', { events: world }, api.keys.ingest);
  expect(seeded.json().accepted, seeded.body).toBe(world.length);
  await run.drain();
  const doc = (await api.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
  routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([m]) => m !== 'parameters')
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        scope: /\(scope ([a-z_]+)/.exec(operation.summary ?? '')?.[1],
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: p.name, instant: p.schema?.format === 'date-time' })),
      })),
  );
});
afterAll(async () => {
  await run?.stop();
  await api?.close();
});

const oddInstant = oddInstants(OCCURRED_AT);
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
      // Mostly the scope the route asks for, so that most requests reach its handler.
      fc.tuple(fc.boolean(), fc.constantFrom(...scopes)),
      fc.array(fc.oneof({ arbitrary: fc.constantFrom(...KNOWN_IDS), weight: 3 }, { arbitrary: oddString, weight: 1 }), { minLength: 3, maxLength: 3 }),
      // Parameters the route declares (by index), each with an odd text and an odd instant; or any name.
      fc.array(fc.tuple(fc.nat(), oddString, oddInstant), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('limit', 'cursor', 'from', 'to', 'x'), oddString, { maxKeys: 1 }),
      body,
      async (pick, [asked, anyScope], params, declared, undeclared, payload) => {
        const route = routes[pick % routes.length]!;
        const scope = asked && route.scope && scopes.includes(route.scope as (typeof scopes)[number]) ? (route.scope as (typeof scopes)[number]) : anyScope;
        let n = 0;
        const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(wellFormed(params[n++ % params.length]!)));
        const query: Record<string, string> = { ...undeclared };
        for (const [i, text, instant] of declared) {
          const parameter = route.query[i % Math.max(route.query.length, 1)];
          if (parameter) query[parameter.name] = parameter.instant ? instant : text;
        }
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
    { numRuns: 6_000, seed: Number(process.env.PROPERTY_SEED ?? 20261127) },
  );
  expect(routes.length).toBeGreaterThan(30);
  // The requests got past authentication on most routes, and were both taken and refused.
  expect(reached.size).toBeGreaterThan(routes.length / 2);
  expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
  expect(statuses.get(400)).toBeGreaterThan(0);
}, 300_000);
