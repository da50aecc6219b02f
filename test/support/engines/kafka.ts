// librdkafka's mock Kafka cluster, started through Debian's kcat: `kcat -X test.mock.num.brokers=1`
// makes librdkafka start an in-process mock cluster and ignore the given bootstrap address; its
// log line "Mock cluster enabled: ... replaced with 127.0.0.1:PORT" gives the address. kcat runs
// as a producer reading stdin, which this process keeps open: the mock lives as long as kcat.
//
// The mock (librdkafka 2.0.2 in Debian 12) serves produce, fetch, metadata (creating a topic when
// a client asks for it with auto-creation allowed, with 4 partitions), ListOffsets, consumer
// groups and offset commits/fetches. It does not serve admin topic creation, and kafkajs cannot
// run an idempotent producer against it (both need a controller it does not announce).
//
// kcat is installed with apt-get when missing (a fresh CI machine, as root). When it cannot be,
// startKafkaMock returns undefined and says why on stderr; the Kafka suites then fail when CI is
// set rather than skip (see platform/bus/kafka/kafka.test.ts).

import { execFile as execFileCb, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureDebianPackage, onPath, type PackageInstall } from '../debian-packages.ts';
import type { LocalEngine } from './index.ts';

const execFile = promisify(execFileCb);
const START_TIMEOUT_MS = 15_000;
const ADDRESS = /Mock cluster enabled: .* replaced with ([0-9.]+:\d+)/;

export async function startKafkaMock(): Promise<LocalEngine | undefined> {
  const kcat = await ensureKcat();
  if (!kcat.ok) {
    process.stderr.write(`kafka mock: not started: ${kcat.reason}\n`);
    return undefined;
  }
  const child = spawn('kcat', ['-X', 'test.mock.num.brokers=1', '-b', 'mock:9092', '-P', '-t', '__svc_mock_keepalive'], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let address: string;
  try {
    address = await mockAddress(child);
  } catch (error) {
    child.kill('SIGKILL');
    process.stderr.write(`kafka mock: not started: ${(error as Error).message}\n`);
    return undefined;
  }
  // Neither the pipe nor the child keeps the test process alive on their own.
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  return { address, stop: () => stopChild(child) };
}

// kcat's version line and its librdkafka: the broker a run was verified against.
export async function kcatVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await execFile('kcat', ['-V']);
    return stdout.split('\n').find((line) => line.startsWith('Version'))?.trim();
  } catch {
    return undefined;
  }
}

function ensureKcat(): Promise<PackageInstall> {
  return ensureDebianPackage('kcat', () => onPath('kcat'));
}

function mockAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => done(new Error(`no mock cluster address from kcat within ${START_TIMEOUT_MS} ms: ${log.slice(-500)}`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      log += chunk.toString('utf8');
      const match = ADDRESS.exec(log);
      if (match) done(undefined, match[1]);
    };
    const onExit = (code: number | null) => done(new Error(`kcat exited (${code}) before the mock cluster was up: ${log.slice(-500)}`));
    const onError = (error: Error) => done(error);
    const done = (error?: Error, address?: string) => {
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      // Keep draining kcat's log so a full pipe never blocks it.
      child.stderr!.on('data', () => undefined);
      if (error) reject(error);
      else resolve(address!);
    };
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}
