// Starting an engine's server process and, later (possibly from another CLI invocation), stopping
// exactly that process. A pid alone is not enough to signal: after a reboot or a crash the number
// may belong to anything. So every launch carries SVC_ENGINE_DIR=<its data dir> in its
// environment, and the kernel's start time of the process is recorded beside its pid; a pid is
// "ours" only while both still match (/proc/<pid>/stat, and /proc/<pid>/environ or cmdline).
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { EngineLaunch } from './types.ts';

const ENGINE_DIR_VARIABLE = 'SVC_ENGINE_DIR';

export interface RunningProcess {
  pid: number;
  // Field 22 of /proc/<pid>/stat: clock ticks after boot; with the pid, unique until reboot.
  startTime: string;
}

export interface LaunchOptions {
  // Outlive this process (the CLI): a session of its own, no tie to this process.
  detached: boolean;
}

// What of this process's environment an engine inherits: not the service's own configuration and
// secrets (the master key, database URLs with their passwords, engine credentials, API keys), which
// a long-lived engine would otherwise hold in /proc/<pid>/environ and in any dump it writes. The
// engine's own variables come from its launch spec.
const NOT_INHERITED = [/^SVC_/, /^(TEST_)?DATABASE_URL$/, /^(NEO4J|CLICKHOUSE|KAFKA|SCHEMA_REGISTRY)_/, /PASSWORD|SECRET|TOKEN|CREDENTIAL|_KEY$/i];

function engineEnvironment(parent: NodeJS.ProcessEnv, own: Record<string, string> | undefined, engineDir: string): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(parent).filter(([name]) => !NOT_INHERITED.some((pattern) => pattern.test(name))));
  return { ...inherited, ...own, [ENGINE_DIR_VARIABLE]: engineDir };
}

export async function launch(spec: EngineLaunch, engineDir: string, options: LaunchOptions): Promise<RunningProcess> {
  const env = engineEnvironment(process.env, spec.env, engineDir);
  // Tied to this process (the test run): should it die without its teardown, the kernel kills the
  // engine too (setpriv's parent-death signal, then exec: the pid stays the engine's).
  const tie = !options.detached && existsSync('/usr/bin/setpriv');
  const command = tie ? '/usr/bin/setpriv' : spec.command;
  const args = tie ? ['--pdeathsig', 'SIGKILL', '--', spec.command, ...spec.args] : spec.args;
  const output = openSync(spec.logFile, 'a');
  let child;
  try {
    child = spawn(command, args, { cwd: spec.cwd, env, detached: options.detached, stdio: ['ignore', output, output] });
  } finally {
    closeSync(output);
  }
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`could not start ${spec.command}: ${error.message}`)));
    child.once('spawn', () => resolve(child.pid!));
  });
  // How it ended, in its own log, for as long as this process is there to see it: an engine that
  // dies by a signal (the kernel's OOM killer, a parent-death signal) writes nothing itself.
  child.once('exit', (code, signalName) => {
    const how = signalName ? `signal ${signalName}` : `exit code ${code}`;
    try {
      appendFileSync(spec.logFile, `\n[svc engines] ${new Date().toISOString()} pid ${pid} ended: ${how}\n`);
    } catch {
      // The data directory may be gone already (a test's clean-up); there is no one else to tell.
    }
  });
  // Neither the handle nor the process keeps this one alive; Node still reaps it should it exit.
  child.unref();
  // The start time is the fork's, the same before and after exec.
  const running = { pid, startTime: (await startTimeOf(pid)) ?? '' };
  // Returned once setpriv has become the engine and it reads as ours: while an exec is under way
  // /proc/<pid>/environ can read empty, and a stop or a status in that moment would not know its
  // own engine.
  const deadline = Date.now() + 2_000;
  const settled = async () => (!tie || (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() !== 'setpriv') && (await isOurs(running, engineDir));
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline && !(await settled())) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return running;
}

// Whether `recorded` is still the process we started for `engineDir`.
export async function isOurs(recorded: RunningProcess, engineDir: string): Promise<boolean> {
  const stat = await readFile(`/proc/${recorded.pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return false;
  const fields = afterCommand(stat);
  // A zombie (exited, not yet reaped by its parent) runs nothing.
  if (fields[0] === 'Z' || fields[0] === 'X') return false;
  if (recorded.startTime && fields[19] !== recorded.startTime) return false;
  const environ = await readFile(`/proc/${recorded.pid}/environ`, 'utf8').catch(() => '');
  if (environ.split('\0').includes(`${ENGINE_DIR_VARIABLE}=${engineDir}`)) return true;
  const cmdline = await readFile(`/proc/${recorded.pid}/cmdline`, 'utf8').catch(() => '');
  return cmdline.includes(engineDir);
}

// How long a stop waits after SIGTERM. An engine under load may need long to finish (ClickHouse
// completing queries and flushing parts, Kafka moving leadership, Neo4j checkpointing), so the wait
// goes on while it keeps working (its CPU time or I/O grows), up to maxMs; one that does nothing
// for quietMs will not end by itself. A number is both.
export interface StopGrace {
  quietMs: number;
  maxMs: number;
}

export interface StopReport {
  outcome: 'stopped' | 'killed' | 'still running' | 'not running';
  // From SIGTERM to its end, or to giving up on it.
  ms: number;
  // Why SIGKILL was sent: nothing done for quietMs, or still working at maxMs.
  killedBecause?: 'idle' | 'too long';
}

// SIGTERM, then SIGKILL when it has not ended within the grace. Only signals while isOurs holds.
export async function stopProcess(recorded: RunningProcess, engineDir: string, grace: number | StopGrace): Promise<StopReport> {
  if (!(await isOurs(recorded, engineDir))) return { outcome: 'not running', ms: 0 };
  const { quietMs, maxMs } = typeof grace === 'number' ? { quietMs: grace, maxMs: grace } : grace;
  const started = Date.now();
  signal(recorded.pid, 'SIGTERM');
  const waited = await endsWithin(recorded, engineDir, quietMs, maxMs);
  if (waited === 'ended') return { outcome: 'stopped', ms: Date.now() - started };
  signal(recorded.pid, 'SIGKILL');
  const killed = await endsWithin(recorded, engineDir, SIGKILL_WAIT_MS, SIGKILL_WAIT_MS);
  return { outcome: killed === 'ended' ? 'killed' : 'still running', ms: Date.now() - started, killedBecause: waited };
}

const SIGKILL_WAIT_MS = 5_000;

// Polls until the process is gone; gives up after quietMs without progress or at maxMs.
async function endsWithin(recorded: RunningProcess, engineDir: string, quietMs: number, maxMs: number): Promise<'ended' | 'idle' | 'too long'> {
  const started = Date.now();
  let lastWork = await workDone(recorded.pid);
  let lastProgressAt = started;
  for (;;) {
    if (!(await isOurs(recorded, engineDir))) return 'ended';
    const now = Date.now();
    const work = await workDone(recorded.pid);
    if (work !== lastWork) {
      lastWork = work;
      lastProgressAt = now;
    }
    if (now - lastProgressAt >= quietMs) return 'idle';
    if (now - started >= maxMs) return 'too long';
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// What the process has done so far, to tell a busy shutdown from a stuck one: its CPU time (every
// thread's) and the bytes it read and wrote (where /proc lets us read them).
async function workDone(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat ? afterCommand(stat) : [];
  const io = await readFile(`/proc/${pid}/io`, 'utf8').catch(() => '');
  const bytes = /^rchar: (\d+)$/m.exec(io)?.[1] ?? '';
  const written = /^wchar: (\d+)$/m.exec(io)?.[1] ?? '';
  return `${fields[11] ?? ''}/${fields[12] ?? ''}/${bytes}/${written}`;
}

// Resident memory of a running process, in bytes (VmRSS).
export async function residentBytes(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : undefined;
}

async function startTimeOf(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat ? afterCommand(stat)[19] : undefined;
}

// /proc/<pid>/stat's fields after "pid (comm)": comm may hold spaces and parentheses.
function afterCommand(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
