// `svc engines up|down|status [ENGINE…]`: the scale-out engines on this machine, without Docker
// (platform/local-engines). `up` prints only `export NAME=value` lines on stdout, so
// `eval "$(npx svc engines up)"` points this shell at them; its progress goes to stderr.
import { resolve } from 'node:path';
import { configSchema } from '../../../platform/config.ts';
import { ENGINE_NAMES } from '../../../platform/local-engines/catalog.ts';
import { defaultCacheDir, localEngineStatus, startLocalEngines, stopLocalEngines, type EngineName, type StopOutcome } from '../../../platform/local-engines/index.ts';
import { UsageError } from '../context.ts';

const USAGE = `usage: svc engines up|down|status [${ENGINE_NAMES.join('|')} …]`;

export async function enginesCommand(args: string[], print: (line: string) => void): Promise<void> {
  const [action, ...names] = args;
  if (!['up', 'down', 'status'].includes(action ?? '')) throw new UsageError(USAGE);
  const unknown = names.filter((name) => !ENGINE_NAMES.includes(name as EngineName));
  if (unknown.length > 0) throw new UsageError(`unknown engine ${unknown.join(', ')}\n${USAGE}`);
  // Only the two settings this command reads: an engine variable set ahead of the exports
  // (SVC_BUS=kafka without KAFKA_BROKERS yet) must not stop the command that provides them.
  const present = Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== undefined && value !== ''));
  const config = configSchema.pick({ SVC_DATA_DIR: true, SVC_ENGINES_CACHE: true }).parse(present);
  const options = {
    dataDir: resolve(config.SVC_DATA_DIR),
    cacheDir: config.SVC_ENGINES_CACHE ?? defaultCacheDir(),
    engines: names.length > 0 ? (names as EngineName[]) : undefined,
    log: (line: string) => process.stderr.write(`engines: ${line}\n`),
  };
  try {
    const code = await perform(action as 'up' | 'down' | 'status', options, print);
    if (code !== 0) process.exitCode = code;
  } catch (error) {
    // What is missing or in the way (a JDK, mvn, the network, a taken port), in one sentence: an
    // operator's problem to fix, not a stack trace.
    process.stderr.write(`svc engines ${action}: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

type Options = Parameters<typeof stopLocalEngines>[0];

// The command's exit code (a failure throws: 1).
async function perform(action: 'up' | 'down' | 'status', options: Options & { log: (line: string) => void }, print: (line: string) => void): Promise<number> {
  switch (action) {
    case 'up': {
      const started = Date.now();
      const { env } = await startLocalEngines({ ...options, detached: true });
      options.log(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s; stop them with \`svc engines down\``);
      for (const [name, value] of Object.entries({ ...env, ...portsOn(env) })) print(`export ${name}=${shellQuote(value)}`);
      return 0;
    }
    case 'down':
      return downExitCode(await stopLocalEngines(options));
    case 'status':
      for (const engine of await localEngineStatus(options)) {
        const address = Object.values(engine.env).filter((value) => /^[a-z]+:\/\/|^[\d.]+:\d+$/.test(value)).join(' ');
        const memory = engine.rssBytes === undefined ? '' : `  rss ${Math.round(engine.rssBytes / 1024 / 1024)} MiB`;
        print(`${engine.name.padEnd(16)} ${engine.state.padEnd(14)} ${engine.version.padEnd(10)} ${engine.pid === undefined ? '-' : `pid ${engine.pid}`}  ${address || '-'}${memory}`);
      }
      return 0;
  }
}

// `down` ended an engine by SIGKILL: it is gone, but its data may need recovery on the next start.
export const EXIT_KILLED = 3;
// `down` left an engine running (it outlived SIGKILL), or failed: as any failed command.
export const EXIT_FAILED = 1;

// How `down` went, for a script: 0 when every engine ended on SIGTERM (or was not running),
// EXIT_KILLED when one had to be killed, EXIT_FAILED when one is still running. Each engine's line
// on stderr says which (platform/local-engines stopLine).
export function downExitCode(outcomes: ReadonlyArray<{ outcome: StopOutcome }>): number {
  if (outcomes.some((o) => o.outcome === 'still running')) return EXIT_FAILED;
  if (outcomes.some((o) => o.outcome === 'killed')) return EXIT_KILLED;
  return 0;
}

// The port settings that put the service on the engines now reachable: without them `svc up`
// in the same shell ran everything on PostgreSQL, the addresses set and unused.
export function portsOn(env: Record<string, string>): Record<string, string> {
  return {
    ...(env.KAFKA_BROKERS && env.SCHEMA_REGISTRY_URL ? { SVC_BUS: 'kafka' } : {}),
    ...(env.NEO4J_URI ? { SVC_GRAPH_STORE: 'neo4j' } : {}),
    ...(env.CLICKHOUSE_URL ? { SVC_AGGREGATE_STORE: 'clickhouse' } : {}),
  };
}

// A value as one shell word: left bare when it is made only of characters no shell treats
// specially, else single-quoted (a generated password, say).
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
