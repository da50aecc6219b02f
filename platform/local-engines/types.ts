import type { StopGrace } from './processes.ts';

// The contract between the local-engines framework (platform/local-engines/index.ts) and each
// engine module (kafka.ts, schema-registry.ts, neo4j.ts, clickhouse.ts). An engine only says how
// to prepare and probe itself; starting detached, polling with a deadline, recording state and
// stopping are the framework's, so every engine is stopped and checked the same way.

export interface EngineContext {
  // SVC_DATA_DIR/engines/<name>: everything the engine writes (data, config, its log) lives here.
  dataDir: string;
  // Shared download cache (SVC_ENGINES_CACHE, default ~/.cache/svc-engines); fetched once.
  cacheDir: string;
  // Progress for the operator; goes to stderr so stdout stays eval-able.
  log: (line: string) => void;
}

// The server process itself, not a wrapper that forks it: its pid is what `down` stops. The
// framework adds SVC_ENGINE_DIR=<ctx.dataDir> to env, by which it recognises the process later.
export interface EngineLaunch {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  // Where the framework sends the process's stdout and stderr.
  logFile: string;
}

export type EngineName = 'kafka' | 'schema-registry' | 'neo4j' | 'clickhouse';

// Ports by the names in portNames, chosen free on 127.0.0.1 by the framework on first start and
// kept in state.json afterwards.
export type EnginePorts = Record<string, number>;

export interface LocalEngineSpec {
  name: EngineName;
  version: string;
  // Fetch artifacts, write config, format storage. Runs before every start; must be idempotent.
  prepare(ctx: EngineContext, ports: EnginePorts): Promise<EngineLaunch>;
  // One probe; the framework polls it with a deadline.
  ready(ports: EnginePorts): Promise<boolean>;
  // Once ready: set passwords, create databases and the like. Must be idempotent.
  afterReady?(ports: EnginePorts, ctx: EngineContext): Promise<void>;
  // The environment the service needs to reach the engine (KAFKA_BROKERS=…).
  exports(ports: EnginePorts, ctx: EngineContext): Record<string, string>;
  portNames: string[];
  // Engines this one needs started and ready first (the registry on Kafka, say). Optional.
  dependsOn?: EngineName[];
  // How long the framework waits for ready() before it gives up (default 120 s).
  readyTimeoutMs?: number;
  // How long a stop waits after SIGTERM before SIGKILL (processes.ts StopGrace; default
  // DEFAULT_STOP_GRACE in index.ts): longer for an engine that may take long to finish under load.
  stopGrace?: StopGrace;
  // The version the running server reports, when `version` cannot say it (a Debian package's).
  detectVersion?(ports: EnginePorts): Promise<string | undefined>;
}
