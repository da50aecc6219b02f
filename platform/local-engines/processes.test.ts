// launch/stopProcess on a plain program standing in for an engine's server: what they promise is
// about processes (ours or not, how one ended), not about any engine.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopLine } from './index.ts';
import { isOurs, launch, stopProcess } from './processes.ts';

describe('engine processes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-processes-'));
  });
  afterAll(async () => {
    // A stand-in killed at a test's end has its end written in its log when its exit is seen,
    // which can be while the directory is being removed.
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  const logEndsWith = async (logFile: string, pattern: RegExp) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const text = await readFile(logFile, 'utf8').catch(() => '');
      if (pattern.test(text) || Date.now() > deadline) return text;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('writes in its log how a tied process ended when something else killed it', async () => {
    const logFile = join(dir, 'killed.log');
    const running = await launch({ command: 'sleep', args: ['60'], cwd: dir, logFile }, dir, { detached: false });
    expect(await isOurs(running, dir)).toBe(true);
    process.kill(running.pid, 'SIGKILL');
    expect(await logEndsWith(logFile, /ended/)).toMatch(new RegExp(`pid ${running.pid} ended: signal SIGKILL\\n$`));
  });

  it('writes its exit code when it ends by itself, and stopProcess then finds it not running', async () => {
    const logFile = join(dir, 'exited.log');
    const running = await launch({ command: 'sh', args: ['-c', 'echo starting; exit 3'], cwd: dir, logFile }, dir, { detached: false });
    const text = await logEndsWith(logFile, /ended/);
    expect(text).toMatch(/^starting\n/);
    expect(text).toMatch(new RegExp(`pid ${running.pid} ended: exit code 3\\n$`));
    expect((await stopProcess(running, dir, 1_000)).outcome).toBe('not running');
  });

  it('hands an engine none of the service\'s configuration and secrets from its own environment', async () => {
    const secrets = { SVC_MASTER_KEY: 'master', DATABASE_URL: 'postgres://u:pw@h/db', NEO4J_PASSWORD: 'neo', AWS_SECRET_ACCESS_KEY: 'aws', SVC_KEY_SECRET: 'key' };
    const saved = { ...process.env };
    Object.assign(process.env, secrets, { LANG: 'C.UTF-8' });
    const logFile = join(dir, 'env.log');
    try {
      await launch({ command: 'sh', args: ['-c', 'env; exit 0'], cwd: dir, logFile, env: { KAFKA_HEAP_OPTS: '-Xmx256m' } }, dir, { detached: false });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    const seen = new Map((await logEndsWith(logFile, /ended/)).split('\n').filter((line) => line.includes('=')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    for (const name of Object.keys(secrets)) expect(seen.has(name), name).toBe(false);
    expect(seen.get('PATH')).toBe(process.env.PATH);
    expect(seen.get('LANG')).toBe('C.UTF-8');
    // Its own variables, and the mark that makes it ours, are there.
    expect(seen.get('KAFKA_HEAP_OPTS')).toBe('-Xmx256m');
    expect(seen.get('SVC_ENGINE_DIR')).toBe(dir);
  });

  // The engine is exec'd through setpriv: until that exec is done its environment can read empty,
  // and a stop at that moment found it "not running" and left it behind.
  it('returns a process that is ours at once: stopped right away, every time', async () => {
    for (let i = 0; i < 50; i++) {
      const running = await launch({ command: 'sleep', args: ['60'], cwd: dir, logFile: join(dir, `at-once-${i}.log`) }, dir, { detached: false });
      expect((await stopProcess(running, dir, 5_000)).outcome, `launch ${i}`).toBe('stopped');
    }
  });

  it('stops with SIGTERM first, and says so in the log', async () => {
    const logFile = join(dir, 'stopped.log');
    const running = await launch({ command: 'sleep', args: ['60'], cwd: dir, logFile }, dir, { detached: false });
    expect((await stopProcess(running, dir, 5_000)).outcome).toBe('stopped');
    expect(await logEndsWith(logFile, /ended/)).toMatch(/ended: signal SIGTERM\n$/);
  });

  // A stand-in for an engine that, on SIGTERM, works for `busyMs` (CPU) and then exits; or, with
  // `busyMs` null, ignores SIGTERM and idles.
  // Returned once its handler is in place (it says "ready").
  const onTerm = async (name: string, busyMs: number | null) => {
    const logFile = join(dir, `${name}.log`);
    const onSigterm = busyMs === null ? '' : `const end = Date.now() + ${busyMs}; while (Date.now() < end) {} process.exit(0);`;
    const running = await launch(
      { command: process.execPath, args: ['-e', `process.on('SIGTERM', () => { ${onSigterm} }); console.log('ready'); setInterval(() => {}, 1000);`], cwd: dir, logFile },
      dir,
      { detached: false },
    );
    expect(await logEndsWith(logFile, /ready/)).toMatch(/ready/);
    return running;
  };

  it('lets a process that is still working after SIGTERM finish, past the quiet grace, and says how long it took', async () => {
    const running = await onTerm('busy', 3_000);
    const report = await stopProcess(running, dir, { quietMs: 1_000, maxMs: 20_000 });
    expect(report.outcome).toBe('stopped');
    expect(report.ms).toBeGreaterThanOrEqual(2_500);
    expect(stopLine(report, { quietMs: 1_000, maxMs: 20_000 })).toMatch(/^stopped in [3-9]\.\d s$/);
  });

  it('kills a process that does nothing after SIGTERM once the quiet grace is over, and says why', async () => {
    const running = await onTerm('idle', null);
    const report = await stopProcess(running, dir, { quietMs: 1_000, maxMs: 20_000 });
    expect(report).toMatchObject({ outcome: 'killed', killedBecause: 'idle' });
    expect(report.ms).toBeLessThan(5_000);
    expect(stopLine(report, { quietMs: 1_000, maxMs: 20_000 })).toBe('killed (SIGKILL): it did nothing for 1.0 s after SIGTERM; it may recover its data on the next start');
  });

  it('kills a process still working when the longest grace is over: the stop is bounded', async () => {
    const running = await onTerm('endless', 60_000);
    const report = await stopProcess(running, dir, { quietMs: 1_000, maxMs: 2_000 });
    expect(report).toMatchObject({ outcome: 'killed', killedBecause: 'too long' });
    expect(report.ms).toBeLessThan(6_000);
    expect(stopLine(report, { quietMs: 1_000, maxMs: 2_000 })).toMatch(/^killed \(SIGKILL\): it was still working 2\.0 s after SIGTERM/);
  });
});
