import type { FastifyInstance } from 'fastify';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import { openGraphStore, type EngineSettings } from '../../platform/engines.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { buildConsoleApp, type ConsoleDeps } from './app.ts';

export type ConsoleConfig = Pick<
  Config,
  | 'LOG_LEVEL'
  | 'SVC_CONSOLE_IDLE_MIN'
  | 'SVC_CONSOLE_ABSOLUTE_H'
  | 'SVC_CONSOLE_LOCKOUT_ATTEMPTS'
  | 'SVC_CONSOLE_LOCKOUT_MIN'
  | 'SVC_CONSOLE_MAX_BODY_BYTES'
  | 'SVC_CONSOLE_TRUST_PROXY'
> &
  EngineSettings;

// The one place the console's parts are created from configuration.
export async function createConsole(options: {
  config: ConsoleConfig;
  pool: Pool;
  masterKey: Buffer;
  clock: Clock;
  logger?: ConsoleDeps['logger'];
}): Promise<{ app: FastifyInstance }> {
  const { config } = options;
  // The network explorer reads the same graph store as the /v1 graph reads.
  const graph = await openGraphStore(config, options.pool);
  const app = await buildConsoleApp({
    pool: options.pool,
    clock: options.clock,
    masterKey: options.masterKey,
    logger: options.logger ?? { level: config.LOG_LEVEL },
    settings: {
      idleMs: config.SVC_CONSOLE_IDLE_MIN * 60_000,
      absoluteMs: config.SVC_CONSOLE_ABSOLUTE_H * 3_600_000,
      lockoutAttempts: config.SVC_CONSOLE_LOCKOUT_ATTEMPTS,
      lockoutMs: config.SVC_CONSOLE_LOCKOUT_MIN * 60_000,
      maxBodyBytes: config.SVC_CONSOLE_MAX_BODY_BYTES,
      trustProxy: config.SVC_CONSOLE_TRUST_PROXY,
    },
    graph: graph.value,
    assets: new TenantAssetRegistry(options.pool, options.clock),
  });
  app.addHook('onClose', async () => graph.close());
  return { app };
}
