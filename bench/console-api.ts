// bench/console-api: latency of the console's alert queue (GET /console/v1/alerts) with 100,000
// live alerts of one tenant in the store.
//
//   Setup. An embedded PostgreSQL on a fresh temporary data directory, migrated; tenant "acme";
//   BENCH_ALERTS (default 100,000) alerts inserted with one INSERT ... SELECT generate_series:
//   created over the last 90 days, one in four closed, severities low/medium/high/critical in
//   turn, 20 detectors, 5,000 subjects; then ANALYZE. The console app (services/console/wiring.ts)
//   in this process, a supervisor logged in; requests go through app.inject (no sockets: what is
//   measured is routing, the session guard, the query and the rendering).
//   Measured, sequentially, BENCH_REQUESTS (default 300) each after 20 warm-up requests:
//     baseline   GET /console/v1/session (the same session guard, no alert query)
//     default    GET /console/v1/alerts (newest first, 50)
//     filtered   GET /console/v1/alerts?status=open&severity=high&max_age_h=720&sort=severity&limit=50
//     severity   GET /console/v1/alerts?sort=severity&limit=50 (every alert, by rank)
//   p50/p95 in ms, and each p95 as a multiple of the baseline's. Target: p95 <= 100 ms (PASS/FAIL).
//
//   npx tsx bench/console-api.ts   (or npm run bench:console-api)
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../platform/clock.ts';
import { loadConfig } from '../platform/config.ts';
import { startEmbeddedPostgres } from '../platform/postgres/embedded.ts';
import { migrate } from '../platform/postgres/migrate.ts';
import { createPool } from '../platform/postgres/pool.ts';
import { createTenant } from '../platform/tenants/tenants.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../services/console/app.ts';
import { createConsoleUser } from '../services/console/users.ts';
import { createConsole } from '../services/console/wiring.ts';
import { percentile, printAgainstBaseline } from './lib/stats.ts';

const ALERTS = Number(process.env.BENCH_ALERTS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const TARGET_P95_MS = 100;
const NOW = '2026-09-01T12:00:00Z';

const dataDir = await mkdtemp(join(tmpdir(), 'bench-console-api-'));
// The server may run as another user (root hands it to postgres): it must reach the directory.
await chmod(dataDir, 0o755);
const server = await startEmbeddedPostgres({ dataDir, port: 0 });
const pool = createPool(server.url(), 8);
try {
  await migrate(pool);
  await createTenant(pool, 'acme', 'USD');
  const started = Date.now();
  await pool.query(
    `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id, party_id,
                         window_from, window_to, score, severity, status, summary, explanation, hits, episode_id, created_at, updated_at)
     SELECT 'acme', gen_random_uuid(), 'live', 1, 'detector-' || (i % 20), 1, 'typology-' || (i % 7), 'party', 'p-' || (i % 5000), 'p-' || (i % 5000),
            t - interval '7 days', t, (i % 100) / 100.0, (ARRAY['low', 'medium', 'high', 'critical'])[1 + i % 4],
            CASE WHEN i % 4 = 0 THEN 'closed' ELSE 'open' END, 'summary', 'explanation', 1, NULL, t, t
       FROM (SELECT i, $2::timestamptz - (i * (90 * 86400.0 / $1)) * interval '1 second' AS t FROM generate_series(1, $1) i) s`,
    [ALERTS, NOW],
  );
  await pool.query('ANALYZE alerts');
  console.log(`inserted ${ALERTS} alerts in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const clock = new ManualClock(NOW);
  const { app } = await createConsole({ config: loadConfig({ LOG_LEVEL: 'silent' }), pool, masterKey: Buffer.alloc(32, 7), clock, logger: false });
  await app.ready();
  const created = await createConsoleUser(pool, { tenantId: 'acme', email: 'bench@example.com', role: 'supervisor' }, clock.now());
  if (created.kind !== 'created') throw new Error(created.kind);
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

  const measure = async (url: string) => {
    const run = async () => {
      const t0 = process.hrtime.bigint();
      const res = await app.inject({ method: 'GET', url, headers: { cookie: `${SESSION_COOKIE}=${cookie}` } });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return ms;
    };
    for (let i = 0; i < 20; i++) await run();
    const times = new Float64Array(REQUESTS);
    for (let i = 0; i < REQUESTS; i++) times[i] = await run();
    times.sort();
    return { p50: percentile(times, 50), p95: percentile(times, 95) };
  };
  const baseline = await measure('/console/v1/session');
  const cases = {
    default: await measure('/console/v1/alerts'),
    filtered: await measure('/console/v1/alerts?status=open&severity=high&max_age_h=720&sort=severity&limit=50'),
    severity: await measure('/console/v1/alerts?sort=severity&limit=50'),
  };
  printAgainstBaseline(baseline, cases, TARGET_P95_MS);
  await app.close();
} finally {
  await pool.end();
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
