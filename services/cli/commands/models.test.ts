import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBank, labelRows, TENANT } from '../../detection/models/test-kit.ts';
import { startDetectionWorld, type DetectionWorld } from '../../../test/support/detection-world.ts';
import { runSvc } from '../../../test/support/svc-process.ts';

// `svc models` as an operator runs it, against the test database of a small bank.
let world: DetectionWorld;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  world = await startDetectionWorld({ SVC_RATE_LIMIT_CAPACITY: '100000', SVC_RATE_LIMIT_REFILL_PER_S: '100000' });
  await buildBank(world);
  const { SVC_DATA_DIR: _ignored, ...rest } = process.env;
  env = { ...rest, DATABASE_URL: world.api.db.url, SVC_MASTER_KEY: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn' };
  dir = await mkdtemp(join(tmpdir(), 'svc-models-'));
}, 120_000);
afterAll(async () => {
  await world?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const svc = (...args: string[]) => runSvc(['models', ...args], env);
const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

describe('svc models', () => {
  it('trains from a label file and prints the held-back report', async () => {
    const labels = await file('labels.csv', ['kind,external_id,label', ...labelRows()].join('\n'));
    const trained = await svc('train', '--tenant', TENANT, '--labels', labels, '--json');
    expect(trained.code, trained.stderr).toBe(0);
    const model = JSON.parse(trained.stdout);
    expect(model).toMatchObject({ id: 'm1', version: 1, built_in: false, held_out: { f1: 1 }, training: { examples: 32, positives: 8 } });

    // An account labelled both ways: the later row is kept, and the operator is told.
    const disagreeing = await file('disagreeing.csv', ['kind,external_id,label', 'account,mule-0,0', ...labelRows()].join('\n'));
    const text = await svc('train', '--tenant', TENANT, '--labels', disagreeing);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/model m2 trained for acme/);
    expect(text.stdout).toMatch(/warning: account mule-0 is labelled both ways \(1 positive, 1 negative\); kept positive from the label file/);
    expect(text.stdout).toMatch(/held back \(stratified, 8 examples, 2 positive\): precision 1\.000, recall 1\.000, F1 1\.000, PR-AUC 1\.000/);
  }, 60_000);

  it('refuses a tenant that does not exist instead of listing nothing', async () => {
    for (const args of [['list', '--tenant', 'acmee'], ['show', '--tenant', 'acmee', '--model', 'default']]) {
      const refused = await svc(...args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/^svc: no tenant acmee/);
    }
  });

  it('says --model is required when it is left out', async () => {
    const refused = await svc('show', '--tenant', TENANT);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^svc: --model is required\n/);
  });

  it('names the bad lines of a label file and refuses it', async () => {
    const bad = await file('bad.csv', 'kind,external_id,label\naccount,mule-0,yes\nvendor,x,1\n');
    const refused = await svc('train', '--tenant', TENANT, '--labels', bad);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/line 2: label must be/);
    expect(refused.stderr).toMatch(/line 3: kind must be account or party/);
  });

  it('lists and shows models, and runs one live through a ruleset', async () => {
    const listed = JSON.parse((await svc('list', '--tenant', TENANT, '--json')).stdout) as Array<{ id: string }>;
    expect(listed.map((m) => m.id)).toEqual(expect.arrayContaining(['m1', 'm2']));
    const shown = await svc('show', '--tenant', TENANT, '--model', 'm1', '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'm1', document: { format: 'logistic-regression/v2' } });

    const missing = await svc('activate', '--tenant', TENANT, '--model', 'm9');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/has no model m9/);
    expect((await svc('activate', '--tenant', TENANT, '--model', 'nine')).code).toBe(2);

    const live = await svc('activate', '--tenant', TENANT, '--model', 'm1', '--json');
    expect(live.code, live.stderr).toBe(0);
    expect(JSON.parse(live.stdout)).toEqual({ model: 'm1', ruleset_version: 1, previous_version: 0, from_shadow: false });
    const { rows } = await world.api.db.pool.query(`SELECT state, document #>> '{detectors,learned_model,params,model}' AS model FROM rulesets WHERE tenant_id = $1`, [TENANT]);
    expect(rows).toEqual([{ state: 'active', model: 'm1' }]);
    // Run again (a retried script), it changes nothing and says so: no second ruleset that a
    // rollback would return to with the model still live.
    const again = await svc('activate', '--tenant', TENANT, '--model', 'm1');
    expect(again.code).toBe(2);
    // The refusal alone: no colon and empty issue list after it.
    expect(again.stderr).toBe('svc: model m1 is already live for acme\n');
    const after = await world.api.db.pool.query(`SELECT state FROM rulesets WHERE tenant_id = $1`, [TENANT]);
    expect(after.rows).toEqual([{ state: 'active' }]);
  }, 60_000);
});
