// What the engines need from the machine, checked before anything starts so a missing tool is one
// clear sentence naming it (not a Java stack trace or ENOENT from spawn half-way through `up`).
import { execFile as execFileCallback } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readdir, readFile, realpath } from 'node:fs/promises';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const execFile = promisify(execFileCallback);

export class MissingPrerequisite extends Error {
  override name = 'MissingPrerequisite';
}

// The absolute path of `command` on PATH, else a MissingPrerequisite saying `what`.
export async function requireCommand(command: string, what: string): Promise<string> {
  const found = await findOnPath(command);
  if (!found) throw new MissingPrerequisite(`${command} not found on PATH: ${what}`);
  return found;
}

export async function findOnPath(command: string, extraDirs: string[] = []): Promise<string | undefined> {
  const dirs = [...new Set([...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs])];
  for (const dir of dirs) {
    const file = join(dir, command);
    if (await access(file, constants.X_OK).then(() => true, () => false)) return file;
  }
  return undefined;
}

// JDK homes (directories holding bin/java) in the order they are tried: JAVA_HOME, the `java` on
// PATH, then the JDKs in /usr/lib/jvm (newest name first).
export async function javaHomes(): Promise<string[]> {
  const candidates: string[] = [];
  if (process.env.JAVA_HOME) candidates.push(process.env.JAVA_HOME);
  const onPath = await findOnPath('java');
  if (onPath) candidates.push((await realpath(onPath)).replace(/\/bin\/java$/, ''));
  const jvms = await readdir('/usr/lib/jvm').catch(() => [] as string[]);
  candidates.push(...jvms.sort().reverse().map((name) => join('/usr/lib/jvm', name)));
  return [...new Set(candidates)];
}

// A JDK whose `java -version` is at least `major`, the first of javaHomes. Returns its home.
export async function requireJava(major: number, engine: string): Promise<string> {
  const seen: string[] = [];
  for (const home of await javaHomes()) {
    const version = await javaMajor(join(home, 'bin', 'java'));
    if (version === undefined) continue;
    seen.push(`${home} (${version})`);
    if (version >= major) return home;
  }
  throw new MissingPrerequisite(
    `${engine} needs a Java ${major}+ JDK and none was found (${seen.length ? `found: ${seen.join(', ')}` : 'no java on PATH, in JAVA_HOME or /usr/lib/jvm'}): install one (apt-get install openjdk-${Math.max(major, 17)}-jdk-headless) or set JAVA_HOME`,
  );
}

export async function javaMajor(javaBinary: string): Promise<number | undefined> {
  try {
    const { stderr } = await execFile(javaBinary, ['-version'], { timeout: 30_000 });
    const match = /version "(\d+)(?:\.(\d+))?/.exec(stderr);
    if (!match) return undefined;
    // Java 8 and older say "1.8.0_…".
    return match[1] === '1' ? Number(match[2]) : Number(match[1]);
  } catch {
    return undefined;
  }
}

// A free port on 127.0.0.1 for an engine, below the kernel's ephemeral range: a port from that
// range can be taken, while its engine is stopped for a restart, by any outgoing connection on
// the machine (the service's own clients retrying that very address can connect to themselves),
// and the engine could not come back on its recorded port. Where no such range is known, or no
// port below it is free after a few draws, the kernel chooses.
export async function freePort(): Promise<number> {
  const below = await ephemeralStart();
  if (below !== undefined && below - 1 > FIRST_ENGINE_PORT) {
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = FIRST_ENGINE_PORT + Math.floor(Math.random() * (below - FIRST_ENGINE_PORT));
      if (!(await portTaken(port))) return port;
    }
  }
  return kernelPort();
}

// Above the well-known and most registered service ports.
const FIRST_ENGINE_PORT = 20_000;

async function ephemeralStart(): Promise<number | undefined> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const low = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > 0 ? low : undefined;
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// Whether something already listens on 127.0.0.1:port (a recorded port taken by another program
// between two `up`s): binding it tells, without talking to whatever is there.
export function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}
