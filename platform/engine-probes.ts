// Whether each engine the configuration points at answers, asked the cheapest way each allows.
// Read at start-up (an engine that does not answer stops the process with a message naming the
// variable that points at it: platform/engines.ts), by `svc status` and by the API's /metrics
// (svc_engine_up). A probe never retries and gives up after PROBE_TIMEOUT_MS: the drivers' own
// retry budgets (kafkajs about 11 s, neo4j-driver 30 s per transaction, twice in a migration)
// would make a start-up failure, a status line or a scrape wait a minute to say "down".
//
// The drivers are imported only for the engines configured, as in engines.ts.
import type { EngineSettings } from './engines.ts';
import type { Pool } from './postgres/pool.ts';
import { describeFailure } from './failure-description.ts';

export type ProbedEngine = 'postgresql' | 'kafka' | 'schema-registry' | 'neo4j' | 'clickhouse';

const PROBE_TIMEOUT_MS = 2_000;

export interface EngineProbe {
  engine: ProbedEngine;
  // The variable that points at it, and the ones that hold its credentials: named in every
  // message about it, so the operator knows what to fix.
  variable: string;
  credentials?: string;
  // Where it is, without credentials.
  address: string;
  // Resolves when the engine answered; rejects with why not.
  check: () => Promise<void>;
  // Whether a failure means the engine answered and refused the credentials.
  refusedCredentials?: (error: unknown) => boolean;
  close: () => Promise<void>;
}

export interface EngineHealth {
  engine: ProbedEngine;
  variable: string;
  address: string;
  up: boolean;
  // Why not, when down: one line, no credentials.
  reason?: string;
  // When it answered and refused the credentials: the variables that hold them.
  credentialsRefused?: string;
}

const NAMES: Record<ProbedEngine, string> = {
  postgresql: 'PostgreSQL',
  kafka: 'Kafka',
  'schema-registry': 'the schema registry',
  neo4j: 'Neo4j',
  clickhouse: 'ClickHouse',
};

// An engine the process cannot start without does not answer. Not a ConfigError (exit 2): the
// configuration may be right and the engine merely away, so the process ends with 1 and its
// supervisor starts it again.
export class EngineUnavailableError extends Error {
  constructor(readonly health: EngineHealth) {
    super(
      health.credentialsRefused
        ? `${health.credentialsRefused}: ${NAMES[health.engine]} at ${health.address} (${health.variable}) refused the credentials: ${health.reason}`
        : `${health.variable}: ${NAMES[health.engine]} at ${health.address} does not answer: ${health.reason}`,
    );
    this.name = 'EngineUnavailableError';
  }
}

// The engines this configuration uses, one probe each; with `pool`, PostgreSQL's too.
export class EngineProbeSet {
  private round: Promise<EngineHealth[]> | undefined;

  constructor(
    readonly probes: EngineProbe[],
    // The engine the bus reads from: its lag cannot be read while it is down.
    readonly busEngine: ProbedEngine,
  ) {}

  // Every probe at once. Callers asking while a round runs share it (one scrape reads the health
  // for several gauges).
  check(): Promise<EngineHealth[]> {
    this.round ??= Promise.all(this.probes.map(probeOnce)).finally(() => (this.round = undefined));
    return this.round;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.probes.map((probe) => probe.close()));
  }
}

// `embedded`: the pool is the embedded server's, which SVC_DATA_DIR (not DATABASE_URL) locates.
export async function openEngineProbes(settings: EngineSettings, options: { pool?: Pool; embedded?: boolean } = {}): Promise<EngineProbeSet> {
  const engines: ScaleOutEngine[] = [
    ...(settings.SVC_BUS === 'kafka' ? (['schema-registry', 'kafka'] as const) : []),
    ...(settings.SVC_GRAPH_STORE === 'neo4j' ? (['neo4j'] as const) : []),
    ...(settings.SVC_AGGREGATE_STORE === 'clickhouse' ? (['clickhouse'] as const) : []),
  ];
  const postgres = options.pool ? [postgresProbe(options.pool, options.embedded ? 'SVC_DATA_DIR' : 'DATABASE_URL')] : [];
  const probes = [...postgres, ...(await Promise.all(engines.map((engine) => openProbe(settings, engine))))];
  return new EngineProbeSet(probes, settings.SVC_BUS === 'kafka' ? 'kafka' : 'postgresql');
}

export type ScaleOutEngine = Exclude<ProbedEngine, 'postgresql'>;

// The probe of one scale-out engine of the configuration (its variables are set: config.ts
// refuses the configuration otherwise).
export async function openProbe(settings: EngineSettings, engine: ScaleOutEngine): Promise<EngineProbe> {
  switch (engine) {
    case 'schema-registry':
      return schemaRegistryProbe(settings);
    case 'kafka':
      return kafkaProbe(settings);
    case 'neo4j':
      return neo4jProbe(settings);
    case 'clickhouse':
      return clickhouseProbe(settings);
  }
}

// Opens the probe, asks once, closes it; throws EngineUnavailableError when the engine does not
// answer. For the engines a process cannot do its work without.
export async function requireReachable(open: () => Promise<EngineProbe> | EngineProbe): Promise<void> {
  const probe = await open();
  try {
    const health = await probeOnce(probe);
    if (!health.up) throw new EngineUnavailableError(health);
  } finally {
    await probe.close();
  }
}

// PostgreSQL, before a process or command does anything with it: the one line of
// EngineUnavailableError (exit code 1) instead of the first statement's stack trace.
export function requirePostgres(pool: Pool, options: { embedded: boolean }): Promise<void> {
  return requireReachable(() => postgresProbe(pool, options.embedded ? 'SVC_DATA_DIR' : 'DATABASE_URL'));
}

async function probeOnce(probe: EngineProbe): Promise<EngineHealth> {
  const about = { engine: probe.engine, variable: probe.variable, address: probe.address };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe.check(), timeout]);
    return { ...about, up: true };
  } catch (error) {
    const refused = probe.refusedCredentials?.(error) === true;
    return {
      ...about,
      ...(refused && probe.credentials ? { credentialsRefused: probe.credentials } : {}),
      up: false,
      reason: describeFailure(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

// --- one probe per engine ------------------------------------------------------------------------

function postgresProbe(pool: Pool, variable: string): EngineProbe {
  const url = pool.options?.connectionString;
  return {
    engine: 'postgresql',
    variable,
    address: url ? withoutCredentials(url) : 'the pool given',
    check: async () => {
      await pool.query('SELECT 1');
    },
    close: async () => {},
  };
}

// The registry's subject list: what every writer asks it first.
function schemaRegistryProbe(settings: EngineSettings): EngineProbe {
  const url = new URL(settings.SCHEMA_REGISTRY_URL!);
  // fetch refuses a URL with credentials in it; they go in the header the registry client sends.
  const headers: Record<string, string> = {};
  if (url.username || url.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const base = url.toString().replace(/\/$/, '');
  return {
    engine: 'schema-registry',
    variable: 'SCHEMA_REGISTRY_URL',
    address: base,
    check: async () => {
      const response = await fetch(`${base}/subjects`, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`GET /subjects answered ${response.status}`);
    },
    refusedCredentials: (error) => /answered 40[13]\b/.test((error as Error).message),
    credentials: 'SCHEMA_REGISTRY_URL',
    close: async () => {},
  };
}

// A metadata request through an admin client that does not retry: the broker list is reachable
// and a broker speaks Kafka.
async function kafkaProbe(settings: EngineSettings): Promise<EngineProbe> {
  const { Kafka, logLevel } = await import('kafkajs');
  const brokers = settings.KAFKA_BROKERS!.split(',').map((b) => b.trim()).filter(Boolean);
  const kafka = new Kafka({
    clientId: settings.KAFKA_CLIENT_ID,
    brokers,
    // The probe says why in its result; kafkajs would print every failed connection again.
    logLevel: logLevel.NOTHING,
    connectionTimeout: PROBE_TIMEOUT_MS,
    requestTimeout: PROBE_TIMEOUT_MS,
    retry: { retries: 0 },
  });
  return {
    engine: 'kafka',
    variable: 'KAFKA_BROKERS',
    address: brokers.join(','),
    check: async () => {
      const admin = kafka.admin({ retry: { retries: 0 } });
      try {
        await admin.connect();
        await admin.describeCluster();
      } finally {
        await admin.disconnect().catch(() => {});
      }
    },
    close: async () => {},
  };
}

// The driver's own connectivity check: a connection, the handshake and the login.
async function neo4jProbe(settings: EngineSettings): Promise<EngineProbe> {
  const neo4j = (await import('neo4j-driver')).default;
  const driver = neo4j.driver(settings.NEO4J_URI!, neo4j.auth.basic(settings.NEO4J_USER, settings.NEO4J_PASSWORD ?? ''), {
    connectionTimeout: PROBE_TIMEOUT_MS,
    connectionAcquisitionTimeout: PROBE_TIMEOUT_MS,
    maxConnectionPoolSize: 1,
  });
  return {
    engine: 'neo4j',
    variable: 'NEO4J_URI',
    credentials: 'NEO4J_USER, NEO4J_PASSWORD',
    address: withoutCredentials(settings.NEO4J_URI!),
    check: async () => {
      await driver.verifyConnectivity({ database: settings.NEO4J_DATABASE });
    },
    refusedCredentials: (error) => String((error as { code?: unknown }).code).startsWith('Neo.ClientError.Security.'),
    close: () => driver.close(),
  };
}

// SELECT 1 as the configured user (the /ping endpoint would not check the credentials).
async function clickhouseProbe(settings: EngineSettings): Promise<EngineProbe> {
  const { createClient, ClickHouseLogLevel } = await import('@clickhouse/client');
  // A client per probe (it connects only when asked): one kept across probes still held the
  // sockets of the requests an outage had timed out, so the first probe after the server came
  // back waited behind them and the gauge said a healthy engine was down for one more scrape.
  const open = () =>
    createClient({
      url: settings.CLICKHOUSE_URL!,
      username: settings.CLICKHOUSE_USER,
      password: settings.CLICKHOUSE_PASSWORD,
      request_timeout: PROBE_TIMEOUT_MS,
      max_open_connections: 1,
      keep_alive: { enabled: false },
      log: { level: ClickHouseLogLevel.OFF },
    });
  return {
    engine: 'clickhouse',
    variable: 'CLICKHOUSE_URL',
    credentials: 'CLICKHOUSE_USER, CLICKHOUSE_PASSWORD',
    address: withoutCredentials(settings.CLICKHOUSE_URL!),
    check: async () => {
      const client = open();
      try {
        const result = await client.ping({ select: true });
        if (!result.success) throw result.error;
      } finally {
        await client.close();
      }
    },
    // 516 AUTHENTICATION_FAILED, 192 UNKNOWN_USER, 193 WRONG_PASSWORD: in the error's code, or
    // only in its text on servers whose format the client does not parse (18.16's).
    refusedCredentials: (error) => {
      const { code, message } = error as { code?: unknown; message?: unknown };
      return ['516', '192', '193'].includes(String(code)) || /\bCode: (516|192|193)\b/.test(String(message));
    },
    close: async () => undefined,
  };
}

// --- messages --------------------------------------------------------------------------------

// Query parameters that carry a secret: libpq-style URLs may give the password (or a client key's
// passphrase) as a parameter instead of in the authority, and pg reads it from there.
const SECRET_PARAMETERS = /^(password|sslpassword|passphrase)$/i;

export function withoutCredentials(address: string): string {
  try {
    const url = new URL(address);
    const secrets = [...url.searchParams.keys()].filter((name) => SECRET_PARAMETERS.test(name));
    if (!url.username && !url.password && secrets.length === 0) return address;
    url.username = '';
    url.password = '';
    for (const name of secrets) url.searchParams.delete(name);
    return url.toString();
  } catch {
    // Not a URL we can read: no user information and no query.
    return address.replace(/\/\/.*@/, '//').split('?')[0]!;
  }
}
