// A private ClickHouse server: Debian's clickhouse-server package (18.16) installed with apt-get
// when no ClickHouse binary is present, run on 127.0.0.1 with its own minimal configuration and
// data under the engine's directory. The system service (/etc/clickhouse-server, systemd) is never
// used: the package is only a source of the binary, and its ports are not ours.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDebianPackage } from './debian-packages.ts';
import { findOnPath, MissingPrerequisite } from './prerequisites.ts';
import type { EngineContext, EngineLaunch, EnginePorts, LocalEngineSpec } from './types.ts';
import { CLICKHOUSE } from './versions.ts';

interface ServerCommand {
  binary: string;
  // Arguments before --config-file: `server` for the single upstream binary.
  args: string[];
}

export const clickhouseEngine: LocalEngineSpec = {
  name: 'clickhouse',
  // Whatever the machine's package gives: detectVersion asks the running server.
  version: `Debian ${CLICKHOUSE.debianPackage}`,
  portNames: ['http'],
  // Under load it finishes running queries and writes its parts and logs before it ends: seen
  // past 20 s (then SIGKILLed), so it gets up to 5 minutes while it still works.
  stopGrace: { quietMs: 30_000, maxMs: 300_000 },
  async prepare(ctx, ports) {
    const command = (await findServer()) ?? (await install(ctx));
    await mkdir(join(ctx.dataDir, 'data'), { recursive: true });
    await writeFile(join(ctx.dataDir, 'config.xml'), serverConfig(ctx.dataDir, ports.http!));
    await writeFile(join(ctx.dataDir, 'users.xml'), USERS);
    return {
      command: command.binary,
      args: [...command.args, `--config-file=${join(ctx.dataDir, 'config.xml')}`],
      cwd: ctx.dataDir,
      logFile: join(ctx.dataDir, 'stdout.log'),
    } satisfies EngineLaunch;
  },
  async ready(ports) {
    try {
      return (await fetch(`${url(ports)}/ping`, { signal: AbortSignal.timeout(1_000) })).ok;
    } catch {
      return false;
    }
  },
  exports(ports) {
    return { CLICKHOUSE_URL: url(ports) };
  },
  async detectVersion(ports) {
    try {
      const response = await fetch(`${url(ports)}/?query=${encodeURIComponent('SELECT version()')}`, { signal: AbortSignal.timeout(2_000) });
      return response.ok ? (await response.text()).trim() : undefined;
    } catch {
      return undefined;
    }
  },
};

function url(ports: EnginePorts): string {
  return `http://127.0.0.1:${ports.http}`;
}

// The upstream single binary (`clickhouse server`), else Debian's or upstream's clickhouse-server.
async function findServer(): Promise<ServerCommand | undefined> {
  const extra = ['/usr/bin', '/usr/sbin', '/usr/local/bin'];
  const single = await findOnPath('clickhouse', extra);
  if (single) return { binary: single, args: ['server'] };
  const server = await findOnPath('clickhouse-server', extra);
  return server ? { binary: server, args: [] } : undefined;
}

// The package's own scripts may start the system service where systemd runs; this server does
// not use it, nor its ports.
async function install(ctx: EngineContext): Promise<ServerCommand> {
  const installed = await ensureDebianPackage(CLICKHOUSE.debianPackage, async () => (await findServer()) !== undefined, ctx.log);
  if (!installed.ok) throw new MissingPrerequisite(`ClickHouse is not installed: ${installed.reason}`);
  const found = await findServer();
  if (!found) throw new MissingPrerequisite(`ClickHouse: ${CLICKHOUSE.debianPackage} is installed but no clickhouse binary was found`);
  return found;
}

// HTTP only, on loopback; everything under `dir`; small caches (a development server on a shared
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
