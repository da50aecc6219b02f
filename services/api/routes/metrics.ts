import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Bus } from '../../../platform/bus/port.ts';
import { isTransient } from '../../../platform/bus/parking/transient.ts';
import type { EngineHealth, ProbedEngine } from '../../../platform/engine-probes.ts';
import type { ConsumerGroupSpec } from '../../../pipelines/groups.ts';

export interface MetricsEngines {
  // One probe round per scrape, shared by the gauges that read it (EngineProbeSet.check).
  check: () => Promise<EngineHealth[]>;
  busEngine: ProbedEngine;
}

// Records of a partition's backlog counted at most, per scrape: the count reads the log's index
// entries, and a scrape is unauthenticated (anyone reaching the host can ask for one).
export const LAG_COUNT_CAP = 100_000;
// Scrapes within this many milliseconds of a render share it, so scrapes cost the database at
// most one render per interval however many arrive.
const SHARED_RENDER_MS = 1_000;

// Prometheus metrics (unauthenticated, like health: counts only, no tenant data). Consumer lag is
// read from the bus at scrape time, so every API process reports the lag of every pipeline.
// Whether each engine answers is probed at scrape time too (svc_engine_up); a gauge whose engine
// is down is left empty for that scrape rather than failing the whole scrape (or, on Kafka,
// waiting out the driver's retries), so the scrape still says which engine is down.
export function registerMetricsRoute(
  app: FastifyInstance,
  deps: { bus: Bus; groups: ConsumerGroupSpec[]; parked: { openCounts: () => Promise<Map<string, number>> }; engines: MetricsEngines },
): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const answers = async (engine: ProbedEngine) => (await deps.engines.check()).find((h) => h.engine === engine)?.up !== false;
  new Gauge({
    name: 'svc_engine_up',
    help: 'Whether the engine answered a probe at this scrape (1) or not (0): PostgreSQL and each configured scale-out engine',
    labelNames: ['engine'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const health of await deps.engines.check()) this.set({ engine: health.engine }, health.up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_consumer_lag_records',
    help: `Records written to the log and not yet committed by the consumer group, counted up to ${LAG_COUNT_CAP} per partition (absent while the bus engine is down or cannot say)`,
    labelNames: ['group', 'partition'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      if (!(await answers(deps.engines.busEngine))) return;
      // A bus that answers its probe but cannot yet say the lag (a broker just restarted, loading
      // its group coordinators: a transient failure) leaves the gauge absent, as while it is
      // down, rather than failing the whole scrape.
      const lags: Array<{ group: string; partition: number; records: number }> = [];
      try {
        for (const { group, topics } of deps.groups) {
          for (const { partition, records } of await deps.bus.lag(group, topics, { upTo: LAG_COUNT_CAP })) lags.push({ group, partition, records });
        }
      } catch (error) {
        if (isTransient(error)) return;
        throw error;
      }
      for (const { group, partition, records } of lags) this.set({ group, partition: String(partition) }, records);
    },
  });
  new Gauge({
    name: 'svc_parked_records',
    help: 'Records the consumer group could not process and parked (svc deadletters), not yet replayed or discarded',
    labelNames: ['group'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      if (!(await answers('postgresql'))) return;
      const counts = await deps.parked.openCounts();
      for (const { group } of deps.groups) this.set({ group }, counts.get(group) ?? 0);
    },
  });
  let shared: { at: number; text: Promise<string> } | undefined;
  const render = (): Promise<string> => {
    const now = Date.now();
    if (shared && now - shared.at < SHARED_RENDER_MS) return shared.text;
    const text = registry.metrics();
    shared = { at: now, text };
    // A failed render is not shared: the next scrape renders again.
    text.catch(() => {
      if (shared?.text === text) shared = undefined;
    });
    return text;
  };
  app.get('/metrics', { config: { public: true } }, async (_request, reply) => reply.type(registry.contentType).send(await render()));
}
