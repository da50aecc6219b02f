import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

// A child process the bench started, with its output kept for error messages.
export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  output: () => string;
  exited: Promise<number | null>;
  hasExited: () => boolean;
}

const OUTPUT_KEPT = 16_000;

export function startChild(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const exitedPromise = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve(code ?? (signal ? -1 : null));
    });
    child.once('error', () => {
      exited = true;
      resolve(-1);
    });
  });
  return { name, process: child, pid: child.pid, output: () => output, exited: exitedPromise, hasExited: () => exited };
}

// Resolves with the first match of pattern on the child's stdout; rejects when the child exits
// first or the timeout passes.
export function waitForLine(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const match = buffered.match(pattern);
      if (match) {
        cleanup();
        resolve(match);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`${child.name} exited before it was ready:\n${child.output()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${child.output()}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.process.stdout!.off('data', onData);
      child.process.off('exit', onExit);
    };
    child.process.stdout!.on('data', onData);
    child.process.once('exit', onExit);
    if (child.hasExited()) onExit();
  });
}

// Sends signal to the child (by its pid) and waits for it to exit; SIGKILL after graceMs.
export async function stopChild(child: Child, signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000): Promise<void> {
  if (child.hasExited()) return;
  try {
    process.kill(child.pid, signal);
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, graceMs);
  await child.exited;
  clearTimeout(timer);
}

// Runs a command to completion; resolves with its stdout, rejects with its output on failure.
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<string> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const [code] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${stdout}${stderr}`);
  return stdout;
}
