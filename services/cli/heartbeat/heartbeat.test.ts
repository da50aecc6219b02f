import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from '../../../test/support/svc-process.ts';
import { heartbeatFresh, startHeartbeat } from './heartbeat.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-heartbeat-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('heartbeat', () => {
  it('writes the file at once and again on every beat, until stopped', async () => {
    const file = join(dir, 'beat');
    const errors: unknown[] = [];
    const stop = await startHeartbeat(file, (error) => errors.push(error), 20);
    expect(await heartbeatFresh(file, 1_000)).toBe(true);
    // Made stale: a later beat makes it fresh again.
    const old = new Date(Date.now() - 60_000);
    await utimes(file, old, old);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await heartbeatFresh(file, 1_000)).toBe(true);
    // Once stop has answered, nothing writes it again (a beat under way included).
    await stop();
    await utimes(file, old, old);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await heartbeatFresh(file, 1_000)).toBe(false);
    expect(errors).toEqual([]);
  });

  it('answers svc alive with 0 for a fresh file, 1 for a stale or missing one, 2 for bad usage', async () => {
    const file = join(dir, 'probe');
    const stop = await startHeartbeat(file, () => undefined);
    await stop();
    const env = { PATH: process.env.PATH ?? '' };
    expect((await runSvc(['alive', file, '--max-age-s', '60'], env)).code).toBe(0);
    const old = new Date(Date.now() - 120_000);
    await utimes(file, old, old);
    const stale = await runSvc(['alive', file, '--max-age-s', '60'], env);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('not written in the last 60 s');
    expect((await runSvc(['alive', join(dir, 'missing')], env)).code).toBe(1);
    expect((await runSvc(['alive'], env)).code).toBe(2);
    expect((await runSvc(['alive', file, '--max-age-s', 'soon'], env)).code).toBe(2);
  });
});
