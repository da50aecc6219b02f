import { systemClock } from '../../../platform/clock.ts';
import { createApi } from '../../api/wiring.ts';
import { openContext } from '../context.ts';

// Starts everything on one machine: today the API (pipelines and workers join as they are built).
// Stops cleanly on SIGINT or SIGTERM, stopping the embedded database only if it started it.
export async function up(): Promise<void> {
  const { config, db, masterKey } = await openContext();
  const { app, startMaintenance } = await createApi({ config, pool: db.pool, databaseUrl: db.url, masterKey, clock: systemClock });
  const stopMaintenance = startMaintenance();
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  process.stdout.write(`svc is up at http://${host}:${port} (database: ${db.mode}; docs at /docs)\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    stopMaintenance();
    await app.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
