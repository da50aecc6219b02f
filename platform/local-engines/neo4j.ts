// Neo4j 5.26 community on this machine, from Maven Central's org.neo4j artifacts (no tarball, no
// image): Maven resolves the runtime classpath of org.neo4j:neo4j, and the JVM runs the community
// server's own entry point with a neo4j.conf written here. Bolt only, on 127.0.0.1; auth on, with a
// password generated once into the data directory (the service reads it from exports(), nobody
// types it, nothing logs it).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { resolveMavenClasspath } from './maven.ts';
import { neo4jJava } from './neo4j-java.ts';
import type { EnginePorts, LocalEngineSpec } from './types.ts';

// The newest 5.26 (the long-term-support line) Maven Central served when this was written.
const VERSION = '5.26.30';
// The server's own jars, as verified here: Maven's -C only proves the transfer against Central's
// .sha1; these prove the artifacts are the ones this module was run with (as versions.ts does).
const SHA256: Record<string, string> = {
  'neo4j-5.26.30.jar': '4e80bcd7b92ff0471b80e86f2d21e1d10bdf9df4d7027b894c3ed0cd790934c5',
  'neo4j-kernel-5.26.30.jar': '43f9645bceb18a84b42b2566ed60501bb099d6020b4f967bc4ece7441c4f5170',
  'neo4j-server-5.26.30.jar': 'fd4bc8118d128ac571b306dd998ada85305fba2c6717aac5a005cda26f11dbaa',
  'neo4j-bolt-5.26.30.jar': 'c9f16127e145b21ddd8752cf743407242ee884a50f366b40de402c106af8222c',
  'neo4j-cypher-5.26.30.jar': 'be329a9cf32bfae5378f8c5cacce6143fd328a5476a8b62b7011dcf6df80dfd7',
  'neo4j-record-storage-engine-5.26.30.jar': '2f90c4af4d6ce08cc71fd47efac304e07e5102ad7c7748ed2ba54d63b47cbcd8',
  'neo4j-security-5.26.30.jar': '1c3af55eb6e3080cb74dd492c2cc3bbd224f04d054e8ccfb7f4ff1b4a472fe10',
  'neo4j-dbms-5.26.30.jar': 'f34c222d82910d2c631a7647e7e97af49ccc17d5e3dcd22ab6b2d2b195722cdd',
  'neo4j-configuration-5.26.30.jar': 'fbf35d14a7e8e3ab200db1108409869943eeaff79d1b2a3898af2e9d2a36d7b1',
};
// The class bin/neo4j console runs in the distribution.
const ENTRY_POINT = 'org.neo4j.server.CommunityEntryPoint';
const USER = 'neo4j';
// The password every new Neo4j gives its neo4j user, good only for changing it.
const INITIAL_PASSWORD = 'neo4j';
const DATABASE = 'neo4j';

// What Neo4j's own launcher adds from the neo4j.conf it ships (server.jvm.additional): without the
// --add-opens its page cache and transaction logs fall back to slower paths ("Reflection access to
// java.nio.DirectByteBuffer is not available", "Incorrect file descriptor" on preallocation).
// AlwaysPreTouch is left out: it would make the whole heap resident at start for a test engine.
const JVM_OPTIONS = [
  '-XX:+UseG1GC',
  '-XX:-OmitStackTraceInFastThrow',
  '-XX:+UnlockExperimentalVMOptions',
  '-XX:+TrustFinalNonStaticFields',
  '-XX:+DisableExplicitGC',
  '-Djdk.nio.maxCachedBufferSize=1024',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--enable-native-access=ALL-UNNAMED',
  '-Dlog4j2.disable.jmx=true',
  '-Dfile.encoding=UTF-8',
];

export const neo4jEngine: LocalEngineSpec = {
  name: 'neo4j',
  version: VERSION,
  portNames: ['bolt'],
  // A first start creates the system and neo4j databases; with other engines starting beside it
  // on two cores that has taken up to a minute.
  readyTimeoutMs: 180_000,

  async prepare(ctx, ports) {
    const javaHome = await neo4jJava(ctx.log);
    const classpath = await resolveMavenClasspath([`org.neo4j:neo4j:${VERSION}`], ctx.cacheDir, { javaHome, sha256: SHA256, log: ctx.log });
    const conf = join(ctx.dataDir, 'conf');
    await mkdir(conf, { recursive: true });
    await mkdir(join(ctx.dataDir, 'logs'), { recursive: true });
    await writeFile(join(conf, 'neo4j.conf'), config(boltPort(ports)));
    await ensurePassword(ctx.dataDir);
    return {
      command: join(javaHome, 'bin', 'java'),
      // Heap and page cache sized for a development and test engine, not for production data.
      // --console-mode: the user log also goes to stdout, so the framework's log file (and the tail
      // it shows when the server exits before answering) says why, a port already taken say; in
      // daemon mode that reaches only logs/neo4j.log.
      args: ['-Xms128m', '-Xmx512m', ...JVM_OPTIONS, '-cp', classpath.join(':'), ENTRY_POINT, `--home-dir=${ctx.dataDir}`, `--config-dir=${conf}`, '--console-mode'],
      cwd: ctx.dataDir,
      // Neo4j also writes logs/neo4j.log and logs/debug.log under the data directory.
      logFile: join(ctx.dataDir, 'logs', 'stdout.log'),
    };
  },

  // Bolt's handshake, not just an open port: Neo4j opens Bolt once its databases have started.
  ready: (ports) => boltAgrees(boltPort(ports)),

  async afterReady(ports, ctx) {
    await ensureUserPassword(boltUri(ports), await readPassword(ctx.dataDir), ctx.dataDir);
  },

  exports(ports, ctx) {
    return { NEO4J_URI: boltUri(ports), NEO4J_USER: USER, NEO4J_PASSWORD: readFileSync(passwordFile(ctx.dataDir), 'utf8').trim(), NEO4J_DATABASE: DATABASE };
  },
};

function boltPort(ports: EnginePorts): number {
  const bolt = ports.bolt;
  if (bolt === undefined) throw new Error('no bolt port assigned');
  return bolt;
}

function boltUri(ports: EnginePorts): string {
  return `bolt://127.0.0.1:${boltPort(ports)}`;
}

// Written on every start (the port may have changed). The home directory is the engine's data
// directory, so Neo4j's relative defaults put data/, logs/, run/, import/ and plugins/ there.
function config(bolt: number): string {
  return `# Written by platform/local-engines/neo4j.ts on every start: edits here are overwritten.
server.default_listen_address=127.0.0.1
server.default_advertised_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:${bolt}
server.bolt.advertised_address=127.0.0.1:${bolt}
server.http.enabled=false
server.https.enabled=false
server.memory.pagecache.size=128m
dbms.security.auth_enabled=true
dbms.usage_report.enabled=false
# Test runs write and delete many tenants: keep the transaction logs small.
db.tx_log.rotation.retention_policy=256M size
`;
}

function passwordFile(dataDir: string): string {
  return join(dataDir, 'neo4j-password');
}

// Stable per data directory: the database keeps the password it was given on first start.
async function ensurePassword(dataDir: string): Promise<void> {
  const existing = await readFile(passwordFile(dataDir), 'utf8').catch(() => undefined);
  if (existing?.trim()) return;
  await writeFile(passwordFile(dataDir), `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
}

async function readPassword(dataDir: string): Promise<string> {
  return (await readFile(passwordFile(dataDir), 'utf8')).trim();
}

// Bolt's handshake: the magic preamble and four version proposals (5.0 to 5.8, then 4.4); a server
// that has started answers with the version it agrees to (non-zero).
function boltAgrees(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(Buffer.from([0x60, 0x60, 0xb0, 0x17, 0, 8, 8, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0])));
    let answer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length >= 4) done(answer.readUInt32BE(0) !== 0);
    });
    socket.once('end', () => done(false));
  });
}

// The neo4j user ends up with the data directory's password: already so after the first start;
// otherwise it still has Neo4j's initial password, which can only change it (on the system
// database). Then the default database must answer with the new one.
async function ensureUserPassword(uri: string, password: string, dataDir: string): Promise<void> {
  if ((await answers(uri, password)) === 'ok') return;
  const { default: neo4j } = await import('neo4j-driver');
  const driver = neo4j.driver(uri, neo4j.auth.basic(USER, INITIAL_PASSWORD));
  try {
    const session = driver.session({ database: 'system' });
    try {
      await session.run('ALTER CURRENT USER SET PASSWORD FROM $old TO $new', { old: INITIAL_PASSWORD, new: password });
    } finally {
      await session.close();
    }
  } catch (error) {
    if (!authFailure(error)) throw error;
    throw new Error(`the server in ${dataDir} takes neither the password in ${passwordFile(dataDir)} nor the initial one (changed by hand?): stop it and delete ${dataDir} to start afresh`);
  } finally {
    await driver.close();
  }
  const outcome = await answers(uri, password);
  if (outcome !== 'ok') throw new Error(`after its password was set, the ${DATABASE} database still refuses it`);
}

// Whether `RETURN 1` runs on the default database with this password. A database still starting
// (it may come up just after Bolt) is waited for, up to a minute.
async function answers(uri: string, password: string): Promise<'ok' | 'refused'> {
  const { default: neo4j } = await import('neo4j-driver');
  const driver = neo4j.driver(uri, neo4j.auth.basic(USER, password));
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      const session = driver.session({ database: DATABASE });
      try {
        await session.run('RETURN 1');
        return 'ok';
      } catch (error) {
        if (authFailure(error)) return 'refused';
        const code = (error as { code?: string }).code ?? '';
        if (!/DatabaseUnavailable|ServiceUnavailable/.test(code) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        await session.close();
      }
    }
  } finally {
    await driver.close();
  }
}

// A wrong password, or the right one that must first be changed (the initial one): either way it
// cannot be used as it is.
function authFailure(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return code === 'Neo.ClientError.Security.Unauthorized' || code === 'Neo.ClientError.Security.CredentialsExpired';
}
