// The `svc` CLI as separate processes, as an operator runs it: one-off commands, and `svc up`
// waited for until it prints its base URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const SVC = join(import.meta.dirname, '../../bin/svc.js');

export interface SvcResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runSvc(args: string[], env: NodeJS.ProcessEnv): Promise<SvcResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SVC, ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export interface SvcUp {
  baseUrl: string;
  process: ChildProcess;
  // SIGTERM, then waits for it to exit.
  stop: () => Promise<void>;
}

// `svc up` on a port the system gives it when it listens (PORT=0; it prints the one it got): a
// port found free beforehand can be taken by another process of the run before the service binds
// it (seen: EADDRINUSE). Rejects with its stderr when it exits before it is up. `args` start
// another command that serves the API (`run api`).
export async function startSvcUp(env: NodeJS.ProcessEnv, args: string[] = ['up']): Promise<SvcUp> {
  const child = spawn(process.execPath, [SVC, ...args], { env: { ...env, PORT: '0', SVC_CONSOLE_PORT: '0' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /svc is up at (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`svc up exited with ${code}: ${stderr}`)));
  });
  return {
    baseUrl,
    process: child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
