// launch/stopProcess on a plain program standing in for an engine's server: what they promise is
// about processes (ours or not, how one ended), not about any engine.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOurs, launch, stopProcess } from './processes.ts';

describe('engine processes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-processes-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
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
    expect(await stopProcess(running, dir, 1_000)).toBe('not running');
  });

  // The engine is exec'd through setpriv: until that exec is done its environment can read empty,
  // and a stop at that moment found it "not running" and left it behind.
  it('returns a process that is ours at once: stopped right away, every time', async () => {
    for (let i = 0; i < 50; i++) {
      const running = await launch({ command: 'sleep', args: ['60'], cwd: dir, logFile: join(dir, `at-once-${i}.log`) }, dir, { detached: false });
      expect(await stopProcess(running, dir, 5_000), `launch ${i}`).toBe('stopped');
    }
  });

  it('stops with SIGTERM first, and says so in the log', async () => {
    const logFile = join(dir, 'stopped.log');
    const running = await launch({ command: 'sleep', args: ['60'], cwd: dir, logFile }, dir, { detached: false });
    expect(await stopProcess(running, dir, 5_000)).toBe('stopped');
    expect(await logEndsWith(logFile, /ended/)).toMatch(/ended: signal SIGTERM\n$/);
  });
});
