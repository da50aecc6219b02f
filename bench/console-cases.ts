// bench/console-cases: latency of the case inbox (GET /console/v1/cases) with 50,000 episodes of
// one tenant in the store.
//
//   Setup. An embedded PostgreSQL on a fresh temporary data directory, migrated; tenant "acme"
//   (base USD); BENCH_EPISODES (default 50,000) episodes inserted with INSERT ... SELECT
//   generate_series: opened over the last 90 days, severities low/medium/high/critical in turn,
//   one in five closed, the rest open/investigating/escalated; two live alerts each (7
//   typologies) with one evidence entry stating a base-asset total; two subject members each;
//   one in three assigned to one of 10 users. The inbox rows are then written by
//   refreshCaseInbox (the code detection runs), 5,000 episodes a call; then ANALYZE. The console
//   app in this process, a supervisor logged in (assigned its share of cases); requests through
//   app.inject, as bench/console-api.ts does.
//   Measured in BENCH_REQUESTS (default 300) interleaved rounds, each request once a round, after
//   20 warm-up rounds:
//     baseline   GET /console/v1/session (the same session guard, no case query)
//     default    GET /console/v1/cases (open work, oldest first, 50)
//     amount     GET /console/v1/cases?sort=amount
//     due        GET /console/v1/cases?sort=due&overdue=true
//     priority   GET /console/v1/cases?sort=priority&typology=typology-3
//     mine       GET /console/v1/cases?assignee=me&sort=due
//     unassigned GET /console/v1/cases?assignee=unassigned&priority=critical
//     page 20    the 20th page of the default list (a cursor from walking 19 pages)
//   p50/p95 in ms, and each p95 as a multiple of the baseline's. Target: p95 <= 100 ms (PASS/FAIL).
//
//   npx tsx bench/console-cases.ts   (or npm run bench:console-cases)
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../platform/clock.ts';
import { loadConfig } from '../platform/config.ts';
import { startEmbeddedPostgres } from '../platform/postgres/embedded.ts';
import { migrate } from '../platform/postgres/migrate.ts';
import { createPool } from '../platform/postgres/pool.ts';
import { createTenant } from '../platform/tenants/tenants.ts';
import { refreshCaseInbox } from '../services/cases/inbox.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../services/console/app.ts';
import { createConsoleUser } from '../services/console/users.ts';
import { createConsole } from '../services/console/wiring.ts';
import { percentile, printAgainstBaseline } from './lib/stats.ts';

const EPISODES = Number(process.env.BENCH_EPISODES ?? 50_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const TARGET_P95_MS = 100;
const NOW = '2026-09-01T12:00:00Z';
const USERS = 10;
const REFRESH_CHUNK = 5_000;

const dataDir = await mkdtemp(join(tmpdir(), 'bench-console-cases-'));
// The server may run as another user (root hands it to postgres): it must reach the directory.
await chmod(dataDir, 0o755);
const server = await startEmbeddedPostgres({ dataDir, port: 0 });
const pool = createPool(server.url(), 8);
try {
  await migrate(pool);
  await createTenant(pool, 'acme', 'USD');
  const clock = new ManualClock(NOW);
  const created = await createConsoleUser(pool, { tenantId: 'acme', email: 'bench@example.com', role: 'supervisor' }, clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
  const started = Date.now();
  await pool.query(
    `INSERT INTO console_users (user_id, tenant_id, email, role, password_hash, must_change_password, created_at)
     SELECT gen_random_uuid(), 'acme', 'analyst-' || u || '@example.com', 'analyst', 'none', false, now() FROM generate_series(1, $1 - 1) u`,
    [USERS],
  );
  const { rows: users } = await pool.query<{ user_id: string }>(`SELECT user_id FROM console_users WHERE tenant_id = 'acme' ORDER BY email`);
  await pool.query(
    `CREATE TEMP TABLE bench_episodes AS
     SELECT i, gen_random_uuid() AS episode_id, $2::timestamptz - (i * (90 * 86400.0 / $1)) * interval '1 second' AS t,
            (ARRAY['low', 'medium', 'high', 'critical'])[1 + i % 4] AS severity,
            CASE WHEN i % 5 = 0 THEN 'closed' ELSE (ARRAY['open', 'investigating', 'escalated'])[1 + i % 3] END AS case_status
       FROM generate_series(1, $1) i`,
    [EPISODES, NOW],
  );
  await pool.query(
    `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, disposition, created_at, updated_at)
     SELECT 'acme', episode_id, CASE WHEN case_status = 'closed' THEN 'resolved' ELSE 'open' END, severity, t - interval '2 days', t, 2, case_status,
            CASE WHEN case_status = 'closed' THEN 'false_positive' END, t, t
       FROM bench_episodes`,
  );
  await pool.query(
    `INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at)
     SELECT 'acme', episode_id, k, CASE k WHEN 'party' THEN 'p-' ELSE 'a-' END || (i % 20000), 'subject', t FROM bench_episodes, unnest(ARRAY['party', 'account']) k`,
  );
  await pool.query(
    `CREATE TEMP TABLE bench_alerts AS
     SELECT gen_random_uuid() AS alert_id, e.*, n FROM bench_episodes e, generate_series(1, 2) n`,
  );
  await pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                         window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     SELECT 'acme', alert_id, 'live', 1, 'detector-' || ((i + n) % 20), 1, 'typology-' || ((i + n) % 7), 'party', 'p-' || (i % 20000), 'p-' || (i % 20000),
            t - interval '7 days', t, 0.5, severity, CASE WHEN case_status = 'closed' THEN 'closed' ELSE 'open' END, 'summary', 'explanation', 1, episode_id, t, t
       FROM bench_alerts`,
  );
  await pool.query(
    `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
     SELECT 'acme', alert_id, 1, t, t, 0.5, severity,
            jsonb_build_object('movements', jsonb_build_array('m-' || i || '-' || n), 'counterparties', '[]'::jsonb,
                               'amounts', jsonb_build_object('total', ((i * 7919 + n * 104729) % 100000000)::text, 'count', 3, 'asset', 'USD'))
       FROM bench_alerts`,
  );
  await pool.query(
    `INSERT INTO console_assignments (tenant_id, episode_id, user_id, assigned_by, assigned_at)
     SELECT 'acme', episode_id, ($1::uuid[])[1 + i % $2], ($1::uuid[])[1], t FROM bench_episodes WHERE i % 3 = 0`,
    [users.map((u) => u.user_id), USERS],
  );
  await pool.query('ANALYZE');
  const seeded = Date.now();
  const { rows: ids } = await pool.query<{ episode_id: string }>('SELECT episode_id FROM bench_episodes ORDER BY i');
  for (let i = 0; i < ids.length; i += REFRESH_CHUNK) {
    await refreshCaseInbox(pool, 'acme', ids.slice(i, i + REFRESH_CHUNK).map((r) => r.episode_id));
  }
  await pool.query('ANALYZE case_inbox');
  console.log(
    `inserted ${EPISODES} episodes (${EPISODES * 2} alerts) in ${((seeded - started) / 1000).toFixed(1)} s; case inbox written in ${((Date.now() - seeded) / 1000).toFixed(1)} s ` +
      `(${(((Date.now() - seeded) / EPISODES) * 1000).toFixed(0)} µs per episode)`,
  );

  const { app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool, masterKey: Buffer.alloc(32, 7), clock, logger: false });
  await app.ready();
  const login = await app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ tenant: 'acme', email: 'bench@example.com', password: created.password }) });
  const cookie = /svc_console=([^;]*)/.exec(String(login.headers['set-cookie']))![1]!;
  const csrf = login.json().csrf_token as string;
  const changed = await app.inject({
    method: 'POST',
    url: '/console/v1/password',
    headers: { cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: csrf, 'content-type': 'application/json' },
    payload: JSON.stringify({ current_password: created.password, new_password: 'bench password long enough' }),
  });
  if (changed.statusCode !== 200) throw new Error(`password change: ${changed.statusCode}`);

  const get = (url: string) => app.inject({ method: 'GET', url, headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
  // Interleaved: each round sends every request once, so load from elsewhere on the machine
  // falls on the baseline and the lists alike and the ratios stay comparable.
  const once = async (url: string) => {
    const t0 = process.hrtime.bigint();
    const res = await get(url);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return ms;
  };
  let cursor = '';
  for (let page = 1; page < 20; page++) cursor = (await get(`/console/v1/cases${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`)).json().next_cursor;
  const urls: Record<string, string> = {
    baseline: '/console/v1/session',
    default: '/console/v1/cases',
    amount: '/console/v1/cases?sort=amount',
    due: '/console/v1/cases?sort=due&overdue=true',
    priority: '/console/v1/cases?sort=priority&typology=typology-3',
    mine: '/console/v1/cases?assignee=me&sort=due',
    unassigned: '/console/v1/cases?assignee=unassigned&priority=critical',
    'page 20': `/console/v1/cases?cursor=${encodeURIComponent(cursor)}`,
  };
  const times = Object.fromEntries(Object.keys(urls).map((name) => [name, new Float64Array(REQUESTS)]));
  for (let round = -20; round < REQUESTS; round++) {
    for (const [name, url] of Object.entries(urls)) {
      const ms = await once(url);
      if (round >= 0) times[name]![round] = ms;
    }
  }
  const stats = (name: string) => {
    const t = times[name]!.sort();
    return { p50: percentile(t, 50), p95: percentile(t, 95) };
  };
  const baseline = stats('baseline');
  const cases = Object.fromEntries(Object.keys(urls).filter((n) => n !== 'baseline').map((n) => [n, stats(n)]));
  printAgainstBaseline(baseline, cases, TARGET_P95_MS);
  await app.close();
} finally {
  await pool.end();
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
