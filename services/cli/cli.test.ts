import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcClient, type PartyEvent } from '../../clients/typescript/src/index.ts';
import { partyEvent } from '../../test/fixtures/events.ts';
import { runSvc, startSvcUp, SVC, type SvcUp } from '../../test/support/svc-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.ts';

// The operator CLI as a newcomer runs it: separate processes sharing one data directory and
// its embedded PostgreSQL.

let dataDir: string;
let env: NodeJS.ProcessEnv;

const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => runSvc(args, { ...env, ...extraEnv });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
  await chmod(dataDir, 0o755);
  const { DATABASE_URL: _ignored, SVC_MASTER_KEY: _alsoIgnored, ...rest } = process.env;
  env = { ...rest, SVC_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }); // the server may still be writing its last WAL
});

const live_ = (suffix: string) => `svc_live_${suffix.repeat(32)}`;

describe('svc CLI', () => {
  it('creates a tenant and issues keys printed once as JSON', async () => {
    const created = await run(['tenants', 'create', 'acme', '--base-asset', 'EUR']);
    expect(created.code, created.stderr).toBe(0);

    const issued = await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'ingest', '--json']);
    expect(issued.code, issued.stderr).toBe(0);
    const key = JSON.parse(issued.stdout);
    expect(Object.keys(key).sort()).toEqual(['environment', 'key_id', 'scopes', 'secret', 'tenant_id']);
    expect(key).toMatchObject({ tenant_id: 'acme', scopes: ['ingest'], environment: 'test' });
    expect(key.key_id).toMatch(/^svc_test_[0-9a-f]{32}$/);
    expect(key.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.secret, 'base64url')).toHaveLength(32);

    const limited = await run(['tenants', 'set-rate-limit', 'acme', '--capacity', '5000', '--refill-per-s', '250']);
    expect(limited.code, limited.stderr).toBe(0);

    const live = JSON.parse((await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'read', '--live', '--json'])).stdout);
    expect(live.key_id).toMatch(/^svc_live_/);
    expect(live.environment).toBe('live');

    // Two scopes named: refused, as one key holds one scope.
    const both = await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'ingest', '--scope', 'read', '--json']);
    expect([both.code, both.stdout, both.stderr]).toEqual([2, '', expect.stringContaining('issue one key for each of ingest, read')]);
  }, 60_000);

  it('refuses bad usage with exit code 2 and a message', async () => {
    const unknownTenant = await run(['keys', 'issue', '--tenant', 'nobody', '--scope', 'ingest', '--json']);
    expect(unknownTenant.code).toBe(2);
    expect(unknownTenant.stderr).toContain('no tenant nobody');
    const badScope = await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'admin']);
    expect(badScope.code).toBe(2);
    const duplicate = await run(['tenants', 'create', 'acme', '--base-asset', 'EUR']);
    expect(duplicate.code).toBe(2);
    const badAsset = await run(['tenants', 'create', 'other', '--base-asset', 'EURO']);
    expect(badAsset.code).toBe(2);
    const tinyBucket = await run(['tenants', 'set-rate-limit', 'acme', '--capacity', '10', '--refill-per-s', '1']);
    expect(tinyBucket.code).toBe(2);
    // Words past those a command takes are refused, not ignored: the second key would stay valid.
    const twoKeys = await run(['keys', 'revoke', live_('a'), live_('b')]);
    expect(twoKeys.code).toBe(2);
    expect(twoKeys.stderr).toMatch(/usage: svc keys issue/);
    // A number flag left empty (an unset variable) is not 0.
    for (const scale of ['', ' ', '0x6', '1e1']) {
      const asset = await run(['assets', 'add', 'X-USDT', '--tenant', 'acme', `--scale=${scale}`]);
      expect(asset.code, scale).toBe(2);
    }
    const endless = await run(['tenants', 'set-rate-limit', 'acme', '--capacity', '5000', '--refill-per-s', 'Infinity']);
    expect(endless.code).toBe(2);
    // Help asked of a command shows the usage and runs nothing (svc up --help started the service).
    for (const args of [['up', '--help'], ['models', '--help'], ['status', '-h'], ['-h']]) {
      const help = await run(args);
      expect(help.code, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(/^svc: the financial-crime control service/);
    }
    // What a command would ignore is refused.
    for (const args of [['up', 'now'], ['status', '--json=true'], ['migrate', '--force']]) {
      const extra = await run(args);
      expect(extra.code, args.join(' ')).toBe(2);
      expect(extra.stderr).toMatch(/does not take/);
    }
    // A file that cannot be read is one line naming it.
    const noFile = await run(['fx-rates', 'load', join(dataDir, 'no-such-rates.csv')]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/^svc: cannot read .*no-such-rates\.csv/);
    expect(noFile.stderr).not.toContain('    at ');
    // JSON saved with a byte-order mark (as Windows editors do) is read as JSON.
    const bom = join(dataDir, 'bom-ruleset.json');
    await writeFile(bom, `\uFEFF${JSON.stringify({ name: 'saved on windows', detectors: {} })}`);
    const created = await run(['rulesets', 'create', '--tenant', 'acme', '--file', bom]);
    expect(created.code, created.stderr).toBe(0);
    // It names no detector: the operator is told which of the live ones it would switch off, and
    // can read the built-in default to start from.
    expect(created.stdout).toMatch(/warning: it does not run \d+ detector\(s\) the live ruleset runs: .*sanctions_hit_reported.*structuring/);
    const builtIn = JSON.parse((await run(['rulesets', 'show', '--tenant', 'acme', '--version', '0', '--json'])).stdout);
    expect(builtIn).toMatchObject({ version: 0, state: 'built-in', document: { name: 'default', detectors: { structuring: { enabled: true } } } });
    // A mistyped option is bad usage too: one line, no stack.
    const typo = await run(['keys', 'issue', '--tenant', 'acme', '--scope', 'ingest', '--lve']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^svc: Unknown option '--lve'/);
    expect(typo.stderr).not.toContain('    at ');
  }, 60_000);

  it('stops start-up on a bad setting, naming the variable', async () => {
    const result = await run(['up'], { PORT: 'eighty' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('PORT');
  });

  describe('while svc up is running', () => {
    let server: SvcUp;
    let baseUrl: string;
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      // Operator test mode, so the webhook worker may deliver to a receiver on this machine.
      receiver = await startWebhookReceiver();
      await writeFile(join(dataDir, 'receiver-ca.pem'), receiver.caPem);
      const webhookEnv = { SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', SVC_WEBHOOK_CA_FILE: join(dataDir, 'receiver-ca.pem') };
      server = await startSvcUp({ ...env, ...webhookEnv });
      baseUrl = server.baseUrl;
    }, 60_000);

    afterAll(async () => {
      await server.stop();
      await receiver.close();
    });

    // A client of the running service with a key the CLI issues.
    const clientWith = async (scope: string) => {
      const key = JSON.parse((await run(['keys', 'issue', '--tenant', 'acme', '--scope', scope, '--json'])).stdout);
      return new SvcClient({ baseUrl, keyId: key.key_id, secret: key.secret });
    };

    it('runs the webhook delivery worker: a test delivery reaches an endpoint, signed', async () => {
      const svcClient = await clientWith('webhook_mgmt');
      const endpoint = await svcClient.webhookEndpoints.create({ url: receiver.url('/cli'), channel: 'operational', event_types: ['coverage.degraded'] });
      expect(endpoint.lastResponse.status).toBe(201);
      receiver.setSecrets('/cli', [endpoint.secret]);
      receiver.setChannel('/cli', 'operational');
      const tested = await svcClient.webhookEndpoints.test(endpoint.endpoint_id);
      expect(tested.lastResponse.status).toBe(200);
      expect(receiver.deliveries.map((d) => d.verification.problems)).toEqual([[]]);
    }, 60_000);

    it('prints its base URL and serves health', async () => {
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    });

    it('issues a key through the CLI that the running service accepts', async () => {
      const svcClient = await clientWith('ingest');
      const result = await svcClient.validate({ object: 'party', event: partyEvent() as PartyEvent });
      expect(result.lastResponse.status).toBe(200);
      expect(result).toMatchObject({ valid: true });
      expect(result.lastResponse.headers.get('svc-ratelimit-limit')).toBe('5000');
    }, 60_000);

    it('runs the canonical pipeline: an ingested event is processed, and status shows the lag', async () => {
      const svcClient = await clientWith('ingest');
      const accepted = await svcClient.parties.ingest(partyEvent('cli-party') as PartyEvent);
      expect(accepted.lastResponse.status).toBe(202);
      let status = '';
      for (let i = 0; i < 100 && status !== 'processed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await svcClient.events.retrieve(accepted.event_id)).status;
      }
      expect(status).toBe('processed');

      const report = await run(['status', '--json']);
      expect(report.code, report.stderr).toBe(0);
      const parsed = JSON.parse(report.stdout);
      expect(parsed.groups[0]).toMatchObject({ group: 'canonical', lag: 0, lag_unknown_reason: null, members: 1 });
      expect(parsed.events.processed).toBeGreaterThanOrEqual(1);
      expect(parsed.webhooks).toEqual({ outbox: expect.any(Number), pending: 0, dead_lettered: 0 });

      const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/svc_consumer_lag_records\{group="canonical",partition="0"\} 0/);
    }, 60_000);

    it('runs another canonical worker on its own that joins the same log', async () => {
      const worker = spawn(process.execPath, [SVC, 'run', 'pipeline', 'canonical'], { env });
      try {
        await new Promise<void>((resolve, reject) => {
          let out = '';
          worker.stdout.on('data', (chunk) => {
            out += chunk;
            if (out.includes('canonical pipeline running')) resolve();
          });
          worker.on('exit', (code) => reject(new Error(`worker exited with ${code}`)));
        });
        let members = 0;
        for (let i = 0; i < 50 && members < 2; i++) {
          members = JSON.parse((await run(['status', '--json'])).stdout).groups[0].members;
          if (members < 2) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(members).toBe(2);
      } finally {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGTERM');
        await exited;
      }
    }, 60_000);

    it('loads an FX rate file whole, and refuses a bad one naming the line', async () => {
      const good = join(dataDir, 'rates.csv');
      const bad = join(dataDir, 'bad.csv');
      await writeFile(good, 'base,quote,rate,rate_scale,valid_from\nEUR,USD,1.0825,4,2026-08-01T00:00:00Z\n');
      await writeFile(bad, 'base,quote,rate,rate_scale,valid_from\nEUR,USD,1.0825,4,2026-08-01T00:00:00Z\nGBP,USD,1.2,0,2026-08-01T00:00:00Z\n');
      const loaded = await run(['fx-rates', 'load', good]);
      expect(loaded.code, loaded.stderr).toBe(0);
      expect(loaded.stdout).toContain('1 rates loaded');
      const refused = await run(['fx-rates', 'load', bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('line 3');
    }, 60_000);
  });
});
