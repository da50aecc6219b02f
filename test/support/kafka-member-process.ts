// A Kafka bus group member in a child process (kafka-member.main.ts), for tests that crash one:
// its stdout reports read as they come, and a real SIGKILL.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ENTRY = join(import.meta.dirname, 'kafka-member.main.ts');
const ROOT = join(import.meta.dirname, '../..');

interface MemberReport {
  ready?: boolean;
  assigned?: number[];
  holding?: number;
}

export interface MemberProcess {
  pid: number;
  // Its partitions as it last reported them.
  assignment: () => number[];
  // The first report (past or to come) that matches; rejects should the process end first, or
  // nothing match within timeoutMs.
  report: (matches: (report: MemberReport) => boolean, what: string, timeoutMs?: number) => Promise<MemberReport>;
  // SIGKILL; resolves with the signal that ended it once it has.
  kill: () => Promise<NodeJS.Signals | null>;
}

export interface MemberSettings {
  databaseUrl: string;
  brokers: string;
  registryUrl: string;
  namespace: string;
  group: string;
  topics: string[];
  member: string;
  holdAfter: number;
}

export function startMemberProcess(settings: MemberSettings): MemberProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: settings.databaseUrl,
      KAFKA_BROKERS: settings.brokers,
      SCHEMA_REGISTRY_URL: settings.registryUrl,
      FAULT_NAMESPACE: settings.namespace,
      FAULT_GROUP: settings.group,
      FAULT_TOPICS: settings.topics.join(','),
      FAULT_MEMBER: settings.member,
      FAULT_HOLD_AFTER: String(settings.holdAfter),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const reports: MemberReport[] = [];
  const waiting = new Set<() => void>();
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      for (const wake of waiting) wake();
      resolve(signal);
    }),
  );
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-8_000)));
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      reports.push(JSON.parse(line) as MemberReport);
    } catch {
      return;
    }
    for (const wake of waiting) wake();
  });
  return {
    pid: child.pid!,
    assignment: () => reports.findLast((r) => r.assigned)?.assigned ?? [],
    report: (matches, what, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const done = () => {
          waiting.delete(look);
          clearTimeout(timer);
        };
        const look = () => {
          const found = reports.find(matches);
          if (found) {
            done();
            resolve(found);
          } else if (exit) {
            done();
            reject(new Error(`the member process ended (${exit.signal ?? `exit code ${exit.code}`}) before ${what}: ${tail(stderr)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the member process did not report ${what} within ${timeoutMs} ms: ${tail(stderr)}`));
        }, timeoutMs);
        waiting.add(look);
        look();
      }),
    kill: () => {
      if (!exit) child.kill('SIGKILL');
      return exited;
    },
  };
}

function tail(text: string): string {
  return text.trim().split('\n').slice(-10).join('\n') || 'nothing on its stderr';
}
