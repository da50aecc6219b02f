import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, rmSync } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { ensureDebianPackage } from '../debian-packages.ts';
import type { LocalEngine } from './index.ts';


// A private ClickHouse server for the test run (and the engines bench): Debian's clickhouse-server
// package (18.16) installed with apt-get when no ClickHouse binary is present, then run as a child
// of this process on 127.0.0.1, on a free port, from a temporary directory holding its own minimal
// configuration and data. The system service (/etc/clickhouse-server, systemd) is never used: the
// package is only a source of the binary. Returns undefined, saying why, when no server can be had.
export async function startClickHouse(log: (line: string) => void = (line) => console.log(line)): Promise<LocalEngine | undefined> {
  let command: ServerCommand | undefined;
  try {
    command = (await findServer()) ?? (await install(log));
  } catch (error) {
    log(`ClickHouse: not available (${(error as Error).message})`);
    return undefined;
  }
  if (!command) return undefined;
  await sweep();
  let lastError: unknown;
  // A free port can be taken between finding it and the server binding it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await run(command);
    } catch (error) {
      lastError = error;
    }
  }
  log(`ClickHouse: could not start ${command.binary} (${(lastError as Error).message})`);
  return undefined;
}

interface ServerCommand {
  binary: string;
  // Arguments before --config-file: `server` for the single upstream binary.
  args: string[];
}

// The upstream single binary (`clickhouse server`), else Debian's or upstream's clickhouse-server.
async function findServer(): Promise<ServerCommand | undefined> {
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const dirs = [...new Set([...path, '/usr/bin', '/usr/sbin', '/usr/local/bin'])];
  for (const dir of dirs) if (await executable(join(dir, 'clickhouse'))) return { binary: join(dir, 'clickhouse'), args: ['server'] };
  for (const dir of dirs) if (await executable(join(dir, 'clickhouse-server'))) return { binary: join(dir, 'clickhouse-server'), args: [] };
  return undefined;
}

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

// The package's own scripts may start the system service where systemd runs; this server does
// not use it, nor its ports.
async function install(log: (line: string) => void): Promise<ServerCommand | undefined> {
  const installed = await ensureDebianPackage('clickhouse-server', async () => (await findServer()) !== undefined, (line) => log(`ClickHouse: ${line}`));
  if (!installed.ok) throw new Error(installed.reason);
  return findServer();
}

const PREFIX = 'svc-clickhouse-';

async function run(command: ServerCommand): Promise<LocalEngine> {
  const dir = await mkdtemp(join(tmpdir(), PREFIX));
  let child: ChildProcess | undefined;
  // Should this process end without its teardown, the server and its directory go too: on a normal
  // exit here, and on any death of this process through the parent-death signal (setpriv).
  const killOnExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    await writeFile(join(dir, 'config.xml'), serverConfig(dir, port));
    await writeFile(join(dir, 'users.xml'), USERS);
    const output = openSync(join(dir, 'stdout.log'), 'a');
    const args = [...command.args, `--config-file=${join(dir, 'config.xml')}`];
    const setpriv = (await executable('/usr/bin/setpriv')) ? '/usr/bin/setpriv' : undefined;
    try {
      child = setpriv
        ? spawn(setpriv, ['--pdeathsig', 'SIGKILL', '--', command.binary, ...args], { cwd: dir, stdio: ['ignore', output, output] })
        : spawn(command.binary, args, { cwd: dir, stdio: ['ignore', output, output] });
    } finally {
      closeSync(output);
    }
    process.once('exit', killOnExit);
    if (child.pid !== undefined) await writeFile(join(dir, 'server.pid'), `${child.pid}\n`);
    const address = `http://127.0.0.1:${port}`;
    await waitUntilAnswering(address, child, dir);
    const started = child;
    return {
      address,
      stop: async () => {
        process.removeListener('exit', killOnExit);
        await stopProcess(started);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    process.removeListener('exit', killOnExit);
    if (child) await stopProcess(child);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

// Directories of earlier servers whose process is gone (a test run killed outright): removed. A
// directory is only touched when its server.pid names a process that no longer exists.
async function sweep(): Promise<void> {
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of entries.filter((entry) => entry.startsWith(PREFIX))) {
    const dir = join(tmpdir(), name);
    const pid = Number((await readFile(join(dir, 'server.pid'), 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitUntilAnswering(address: string, child: ChildProcess, dir: string): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited (${child.exitCode ?? child.signalCode}): ${await tail(dir)}`);
    }
    try {
      const response = await fetch(`${address}/ping`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no answer on ${address} within 60 s: ${await tail(dir)}`);
}

async function tail(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const file of ['server.err.log', 'stdout.log']) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    if (text.trim()) parts.push(text.trim().split('\n').slice(-5).join(' | '));
  }
  return parts.join(' | ') || 'no output';
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  // Within vitest's 10 s teardown: the server's directory is thrown away, so a kill loses nothing.
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// HTTP only, on loopback; everything under `dir`; small caches (a test server on a shared
// machine). The <yandex> root is read by 18.16 and by current releases alike.
function serverConfig(dir: string, port: number): string {
  const data = join(dir, 'data');
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>${join(dir, 'server.log')}</log>
    <errorlog>${join(dir, 'server.err.log')}</errorlog>
    <size>10M</size>
    <count>1</count>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${port}</http_port>
  <path>${data}/</path>
  <tmp_path>${data}/tmp/</tmp_path>
  <user_files_path>${data}/user_files/</user_files_path>
  <format_schema_path>${data}/format_schemas/</format_schema_path>
  <users_config>${join(dir, 'users.xml')}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mlock_executable>false</mlock_executable>
</yandex>
`;
}

// The default user, no password, loopback only.
const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>4000000000</max_memory_usage>
    </default>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default></default>
  </quotas>
</yandex>
`;
