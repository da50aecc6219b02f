import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Bus } from '../../../platform/bus/port.ts';
import type { ConsumerGroupSpec } from '../../../pipelines/groups.ts';

// Prometheus metrics (unauthenticated, like health: counts only, no tenant data). Consumer lag is
// read from the bus at scrape time, so every API process reports the lag of every pipeline.
export function registerMetricsRoute(
  app: FastifyInstance,
  deps: { bus: Bus; groups: ConsumerGroupSpec[]; parked: { openCounts: () => Promise<Map<string, number>> } },
): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  new Gauge({
    name: 'svc_consumer_lag_records',
    help: 'Records written to the log and not yet committed by the consumer group',
    labelNames: ['group', 'partition'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { group, topics } of deps.groups) {
        for (const { partition, records } of await deps.bus.lag(group, topics)) this.set({ group, partition: String(partition) }, records);
      }
    },
  });
  new Gauge({
    name: 'svc_parked_records',
    help: 'Records the consumer group could not process and parked (svc deadletters), not yet replayed or discarded',
    labelNames: ['group'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const counts = await deps.parked.openCounts();
      for (const { group } of deps.groups) this.set({ group }, counts.get(group) ?? 0);
    },
  });
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}
