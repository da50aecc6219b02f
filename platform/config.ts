import { z } from 'zod';

// Every setting the processes read, with its default, in one place. Only the wiring module of a
// process calls loadConfig; everything else receives the parsed values it needs.
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

export const configSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  SVC_DATA_DIR: z.string().min(1).default('.data'),
  // Downloads of `svc engines up` (platform/local-engines), shared by every data directory; unset:
  // ~/.cache/svc-engines (XDG_CACHE_HOME's when set).
  SVC_ENGINES_CACHE: z.string().min(1).optional(),
  SVC_PIPELINES_MANIFEST: z.string().min(1).optional(), // the pipeline manifest `svc run` reads; unset: infra/pipelines.yaml of this checkout
  SVC_HEARTBEAT_FILE: z.string().min(1).optional(), // `svc run`/`svc up` rewrite it every 10 s while running (`svc alive` reads it); unset: none
  // External PostgreSQL 15+; when unset the service starts its embedded PostgreSQL.
  DATABASE_URL: z.string().url().optional(),
  // Port of the embedded PostgreSQL; 0 picks a free one on each start.
  SVC_PG_PORT: port.default(0),
  // 32 bytes as base64url; generated into SVC_DATA_DIR on first start when unset in embedded mode.
  SVC_MASTER_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64url').length === 32, 'must be 32 bytes encoded as base64url')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Largest request body accepted, in bytes (the spec's payload cap).
  SVC_MAX_BODY_BYTES: positiveInt.default(4 * 1024 * 1024),
  // How far into the future an occurred_at may lie before it is refused.
  SVC_OCCURRED_AT_FUTURE_SKEW_S: positiveInt.default(300),
  SVC_PG_POOL_SIZE: positiveInt.default(10),
  // Default per-tenant token bucket (events); `svc tenants set-rate-limit` overrides per tenant.
  SVC_RATE_LIMIT_CAPACITY: z.coerce.number().int().min(1000).default(10_000),
  SVC_RATE_LIMIT_REFILL_PER_S: z.coerce.number().positive().default(2_000),
  // How long an Idempotency-Key's stored response is kept (the spec asks for at least 24 h).
  SVC_IDEMPOTENCY_RETENTION_H: z.coerce.number().min(24).default(24),
  // Minutes without an arrival after which a tenant's movement / control-event feed is degraded.
  SVC_COVERAGE_MOVEMENT_SILENCE_MIN: positiveInt.default(60),
  SVC_COVERAGE_CONTROL_EVENT_SILENCE_MIN: positiveInt.default(24 * 60),
  // Activity rows a detect process keeps between batches (platform/aggregates/snapshot-cache.ts);
  // 0 reads every snapshot from the store.
  SVC_DETECT_CACHED_ROWS: z.coerce.number().int().min(0).default(250_000),
  // An import's backfill window starts this many days before its go-live watermark unless the
  // import gives backfill_from.
  SVC_IMPORT_BACKFILL_DAYS: positiveInt.max(36_500).default(400),
  // Operator test mode, off by default: lets webhook endpoints sit on private, loopback and other
  // non-public addresses (a receiver on this machine), and trusts an extra CA for their TLS.
  SVC_WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag.default(false),
  SVC_WEBHOOK_CA_FILE: z.string().min(1).optional(),
  // One delivery attempt, from connect to the end of the response, is abandoned after this long.
  SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(60_000).default(10_000),
  // Failed deliveries are retried for this long before they are dead-lettered (the spec: at least 24 h).
  SVC_WEBHOOK_RETRY_HORIZON_H: z.coerce.number().min(24).max(24 * 30).default(72),
  // Attempts in flight per worker process, and at most this many of them to one endpoint, so a
  // slow endpoint holds a few slots and never the whole worker.
  SVC_WEBHOOK_CONCURRENCY: positiveInt.max(4096).default(256),
  SVC_WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt.max(1024).default(32),
  // How long POST /v1/webhook-endpoints/{id}/test waits for the worker's attempt before its 504.
  SVC_WEBHOOK_TEST_WAIT_MS: z.coerce.number().int().min(1000).max(120_000).default(15_000),

  // The analysts' console (services/console, docs/decisions/0017-console-auth.md): its own port on
  // HOST; sessions end after SVC_CONSOLE_IDLE_MIN without a request or SVC_CONSOLE_ABSOLUTE_H
  // after login; SVC_CONSOLE_LOCKOUT_ATTEMPTS failed logins in a row lock a user for
  // SVC_CONSOLE_LOCKOUT_MIN. TRUST_PROXY: believe X-Forwarded-Proto/-For from the proxy in front
  // (TLS terminated there), which decides the cookie's Secure flag.
  SVC_CONSOLE_PORT: port.default(8081),
  SVC_CONSOLE_IDLE_MIN: positiveInt.max(24 * 60).default(30),
  SVC_CONSOLE_ABSOLUTE_H: positiveInt.max(7 * 24).default(12),
  SVC_CONSOLE_LOCKOUT_ATTEMPTS: z.coerce.number().int().min(3).max(100).default(5),
  SVC_CONSOLE_LOCKOUT_MIN: positiveInt.max(24 * 60).default(15),
  SVC_CONSOLE_TRUST_PROXY: flag.default(false),
  SVC_CONSOLE_MAX_BODY_BYTES: positiveInt.max(1024 * 1024).default(64 * 1024),

  // Scale-out engines. Each port runs on PostgreSQL unless its engine is chosen here.
  SVC_BUS: z.enum(['postgres', 'kafka']).default('postgres'),
  // Comma-separated host:port list.
  KAFKA_BROKERS: z.string().min(1).optional(),
  KAFKA_CLIENT_ID: z.string().min(1).default('svc'),
  // Exactly-once per partition on brokers that support idempotent producers (not the test mock).
  KAFKA_IDEMPOTENT_PRODUCER: flag.default(true),
  // Confluent-compatible schema registry for the Avro value schemas.
  SCHEMA_REGISTRY_URL: z.string().url().optional(),
  SVC_GRAPH_STORE: z.enum(['postgres', 'neo4j']).default('postgres'),
  NEO4J_URI: z.string().min(1).optional(),
  NEO4J_USER: z.string().min(1).default('neo4j'),
  NEO4J_PASSWORD: z.string().optional(),
  NEO4J_DATABASE: z.string().min(1).default('neo4j'),
  SVC_AGGREGATE_STORE: z.enum(['postgres', 'clickhouse']).default('postgres'),
  CLICKHOUSE_URL: z.string().url().optional(),
  CLICKHOUSE_USER: z.string().min(1).default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('svc'),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as shells commonly export them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(present);
  if (parsed.success) {
    const engineProblems = [
      parsed.data.SVC_BUS === 'kafka' && !parsed.data.KAFKA_BROKERS && 'KAFKA_BROKERS: required when SVC_BUS is kafka',
      parsed.data.SVC_BUS === 'kafka' && !parsed.data.SCHEMA_REGISTRY_URL && 'SCHEMA_REGISTRY_URL: required when SVC_BUS is kafka',
      parsed.data.SVC_GRAPH_STORE === 'neo4j' && !parsed.data.NEO4J_URI && 'NEO4J_URI: required when SVC_GRAPH_STORE is neo4j',
      parsed.data.SVC_AGGREGATE_STORE === 'clickhouse' && !parsed.data.CLICKHOUSE_URL && 'CLICKHOUSE_URL: required when SVC_AGGREGATE_STORE is clickhouse',
    ].filter((p): p is string => typeof p === 'string');
    if (engineProblems.length > 0) throw new ConfigError(`invalid configuration\n  ${engineProblems.join('\n  ')}`);
    if (parsed.data.DATABASE_URL && !parsed.data.SVC_MASTER_KEY) {
      throw new ConfigError(
        'SVC_MASTER_KEY: required when DATABASE_URL is set, so every process shares the key that encrypts secrets',
      );
    }
    return parsed.data;
  }
  const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
  throw new ConfigError(`invalid configuration\n  ${lines.join('\n  ')}`);
}
