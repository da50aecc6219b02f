// For generated requests on every route of the analysts' console (as its route contracts list
// them), made with a signed-in supervisor's session, the answer is a success or a governed
// problem: never a 5xx, and every 4xx is application/problem+json with the catalog's status.
// Path parameters name things that exist as often as not, so queries reach the stores.
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../platform/config.ts';
import { strictQueryNames } from '../platform/http/query-schema.ts';
import { uuidv7 } from '../platform/ids.ts';
import { problemSchema } from '../schemas/problem.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../services/console/app.ts';
import { createConsoleUser } from '../services/console/users.ts';
import { createConsole } from '../services/console/wiring.ts';
import { startDetectionWorld, type DetectionWorld } from './support/detection-world.ts';
import { oddInstants } from './support/odd-instants.ts';

let world: DetectionWorld;
let app: FastifyInstance;
let session: { cookie: string; csrf: string };
// A route with the query parameters its strict query takes.
let routes: Array<{ method: string; url: string; query: readonly string[] }>;
const known: string[] = ['alice', 'bob', 'alice-acct', 'bob-acct', 'mv-1'];

beforeAll(async () => {
  world = await startDetectionWorld();
  const tenant = world.api.tenantId;
  await world.party('alice');
  await world.party('bob');
  await world.account('alice-acct', 'alice');
  await world.account('bob-acct', 'bob');
  await world.movement({ id: 'mv-1', from: ['alice-acct', 'alice'], to: ['bob-acct', 'bob'], value: 12_500, at: '2026-08-20T10:00:00Z' });
  await world.settle();
  // An episode with one alert on alice, as detection would have left them.
  const episode = uuidv7(Date.parse('2026-08-30T00:00:00Z'));
  const alert = uuidv7(Date.parse('2026-08-20T10:00:00Z'));
  const pool = world.api.db.pool;
  await pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     VALUES ($1, $2, 'open', 'high', '2026-08-20T10:00:00Z', '2026-08-20T10:00:00Z', 1, 'open', NULL, '2026-08-30T00:00:00Z', '2026-08-30T00:00:00Z')`,
    [tenant, episode],
  );
  await pool.query(`INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at) VALUES ($1, $2, 'party', 'alice', 'subject', now())`, [tenant, episode]);
  await pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id, window_from, window_to,
                         score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     VALUES ($1, $2, 'live', 1, 'structuring', 1, 'structuring', 'party', 'alice', 'alice', $3::timestamptz - interval '7 days', $3, 0.8, 'high', 'open', 'summary', 'explanation', 1, $4, $3, $3)`,
    [tenant, alert, '2026-08-20T10:00:00Z', episode],
  );
  known.push(`epsd_${episode}`, `alrt_${alert}`, episode, alert);

  ({ app } = await createConsole({
    config: loadConfig({ LOG_LEVEL: 'silent', SVC_CONSOLE_MAX_BODY_BYTES: '65536' }),
    pool,
    masterKey: world.api.masterKey,
    clock: world.api.clock,
    logger: false,
  }));
  await app.ready();
  const created = await createConsoleUser(pool, { tenantId: tenant, email: 'sue@example.com', role: 'supervisor' }, world.api.clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const login = await app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ tenant, email: 'sue@example.com', password: created.password }) });
  session = { cookie: /svc_console=([^;]*)/.exec(String(login.headers['set-cookie']))![1]!, csrf: login.json().csrf_token as string };
  const changed = await call('POST', '/console/v1/password', JSON.stringify({ current_password: created.password, new_password: 'correct horse battery staple' }));
  expect(changed.statusCode, changed.body).toBe(200);
  // Signing out or changing the password would end the session the property runs in.
  routes = app.routeContracts
    .filter((r) => r.url.startsWith('/console/v1') && r.method !== 'HEAD' && !(r.url === '/console/v1/session' && r.method !== 'GET') && r.url !== '/console/v1/password')
    .map((r) => ({ method: r.method, url: r.url, query: strictQueryNames((r.schema as { querystring?: unknown } | undefined)?.querystring) }));
});
afterAll(async () => {
  await app?.close();
  await world?.close();
});

function call(method: string, url: string, payload?: string) {
  return app.inject({
    method: method as 'GET',
    url,
    headers: { cookie: `${SESSION_COOKIE}=${session.cookie}`, [CSRF_HEADER]: session.csrf, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload } : {}),
  });
}

// Around alice's movement, so that a window can hold it.
const oddInstant = oddInstants('2026-08-20T10:00:00Z');
const oddString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  oddInstant,
  fc.constantFrom('', '\u0000', '-1', '0', '201', '1e309', 'x'.repeat(5_000), '__proto__', '%', 'in,out', 'critical', 'oldest', 'json', 'csv', 'transfer'),
);
// A query value: odd, or what a parameter of that name takes, so that a whole query is valid as
// often as not and reaches the store.
const queryValue = fc.record({ odd: fc.boolean(), text: oddString, instant: oddInstant, count: fc.constantFrom('1', '2', '50'), direction: fc.constantFrom('in', 'out', 'both') });
type QueryValue = typeof queryValue extends fc.Arbitrary<infer T> ? T : never;
const valueFor = (name: string, value: QueryValue): string => {
  if (value.odd) return value.text;
  if (['from', 'to', 'since', 'until', 'as_of'].includes(name)) return value.instant;
  if (['limit', 'depth', 'max_depth'].includes(name)) return value.count;
  return name === 'direction' ? value.direction : value.text;
};
const QUERY_NAMES = ['from', 'to', 'since', 'until', 'limit', 'cursor', 'direction', 'depth', 'status', 'severity', 'sort', 'edge_types', 'min_amount', 'as_of', 'format', 'detector', 'subject', 'max_depth', 'x'];
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.constantFrom('status', 'reason', 'disposition', 'note', 'body', 'decision', 'user_id', 'narrative', 'x'), fc.oneof(oddString, fc.jsonValue({ maxDepth: 2 })), { maxKeys: 3 }),
);

it('answers every console route with a success or a governed problem, never a 5xx', async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(
      fc.nat(),
      fc.array(fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: oddString, weight: 1 }), { minLength: 3, maxLength: 3 }),
      // Parameters the route takes (by index), or now and then any name.
      fc.array(fc.tuple(fc.nat(), queryValue), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...QUERY_NAMES), oddString, { maxKeys: 1 }),
      body,
      async (pick, params, declared, undeclared, payload) => {
        const route = routes[pick % routes.length]!;
        const query: Record<string, string> = route.query.length > 0 ? {} : { ...undeclared };
        for (const [i, value] of declared) {
          const name = route.query[i % Math.max(route.query.length, 1)];
          if (name !== undefined) query[name] = valueFor(name, value);
        }
        let n = 0;
        const path = route.url.replace(/:[A-Za-z_]+/g, () => encodeURIComponent(Buffer.from(params[n++ % params.length]!, 'utf8').toString('utf8')));
        const search = new URLSearchParams(query).toString();
        const url = `${path}${search ? `?${search}` : ''}`;
        const res = await call(route.method, url, route.method === 'GET' || route.method === 'DELETE' ? undefined : JSON.stringify(payload) ?? 'null');
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const where = `${route.method} ${url.slice(0, 160)} -> ${res.statusCode}: ${res.body.slice(0, 300)}`;
        expect(res.statusCode, where).toBeLessThan(500);
        if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('application/')) {
          expect(String(res.headers['content-type']), where).toMatch(/^application\/problem\+json/);
          expect(problemSchema.parse(res.json()).status, where).toBe(res.statusCode);
        }
      },
    ),
    { numRuns: 10_000, seed: Number(process.env.PROPERTY_SEED ?? 20261128) },
  );
  expect(routes.length).toBeGreaterThan(20);
  // Both taken and refused: the session held throughout.
  expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
  expect(statuses.get(400)).toBeGreaterThan(0);
  expect(statuses.get(401) ?? 0).toBe(0);
}, 300_000);
