import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Bus } from '../../../platform/bus/port.ts';
import { LAG_COUNT_CAP, registerMetricsRoute } from './metrics.ts';

// The route alone, over a bus that counts what it is asked: a scrape is unauthenticated, so what
// one costs the database must stay bounded however many arrive.
describe('GET /metrics', () => {
  it('counts each backlog only up to a cap, and lets concurrent scrapes share one render', async () => {
    const asked: Array<{ group: string; upTo: number | undefined }> = [];
    const bus = {
      lag: async (group: string, _topics: string[], options?: { upTo?: number }) => {
        asked.push({ group, upTo: options?.upTo });
        await new Promise((resolve) => setTimeout(resolve, 50));
        return [{ partition: 0, records: 7 }];
      },
    } as unknown as Bus;
    const app = Fastify();
    registerMetricsRoute(app, {
      bus,
      groups: [
        { group: 'canonical', topics: ['inbox'] },
        { group: 'graph', topics: ['canonical.movement'] },
      ] as never,
      parked: { openCounts: async () => new Map() },
      engines: { check: async () => [{ engine: 'postgresql', up: true }] as never, busEngine: 'postgresql' as never },
    });
    const scrapes = await Promise.all([1, 2, 3].map(() => app.inject({ method: 'GET', url: '/metrics' })));
    for (const scrape of scrapes) {
      expect(scrape.statusCode).toBe(200);
      expect(scrape.body).toContain('svc_consumer_lag_records{group="graph",partition="0"} 7');
    }
    expect(asked).toEqual([
      { group: 'canonical', upTo: LAG_COUNT_CAP },
      { group: 'graph', upTo: LAG_COUNT_CAP },
    ]);
    await app.close();
  });
});
