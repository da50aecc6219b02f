import { every } from '../../platform/periodic.ts';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { CANONICAL } from '../groups.ts';
import { quarantineOverdue, releasableEvents } from './event-status.ts';
import { IdentifierHasher } from './identifiers.ts';
import { CanonicalProcessor } from './processor.ts';

const QUARANTINE_SWEEP_MS = 30_000;
// Every stage after this one waits for it, so an idle canonical member looks for new records more
// often than the bus's default: one cheap statement per tick (docs/decisions/0043).
const IDLE_POLL_MS = 20;

export interface CanonicalPipeline {
  processor: CanonicalProcessor;
  consumer: Consumer;
  // Quarantines overdue holds now (also done every 30 s); returns how many.
  sweep: () => Promise<number>;
  stop: () => Promise<void>;
}

// The canonical pipeline as a process part: a consumer of the inbox topics plus the sweep that
// turns overdue holds into referential exceptions.
export async function startCanonicalPipeline(options: {
  pool: Pool;
  bus: Bus;
  clock: Clock;
  masterKey: Buffer;
  onError: (error: unknown) => void;
  // How this worker signs its stage_history entries.
  worker?: string;
}): Promise<CanonicalPipeline> {
  const worker = options.worker ?? `canonical:${process.pid}`;
  const processor = new CanonicalProcessor({
    pool: options.pool,
    clock: options.clock,
    hasher: new IdentifierHasher(options.masterKey),
    assets: new TenantAssetRegistry(options.pool, options.clock),
    worker,
    onError: options.onError,
  });
  const consumer = await options.bus.consume({
    ...CANONICAL,
    idlePollMs: IDLE_POLL_MS,
    handle: (records) => processor.handle(records),
  });
  // Quarantines overdue holds and releases any hold whose entities have all arrived.
  const sweep = async () => {
    await processor.retry(await releasableEvents(options.pool));
    return quarantineOverdue(options.pool, options.clock.now(), worker);
  };
  const sweeping = every(QUARANTINE_SWEEP_MS, sweep, options.onError);
  return {
    processor,
    consumer,
    sweep,
    stop: async () => {
      await sweeping.stop();
      await consumer.stop();
    },
  };
}
