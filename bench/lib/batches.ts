import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { DETECTION_NODE_OPTIONS } from '../../pipelines/detect/node-options.ts';
import { batchBody } from './amlsim.ts';
import { answered, batchCounts, signedTarget } from './api.ts';
import { startNode, TENANT, type BenchService } from './bench-service.ts';
import { newAgent, send } from './load.ts';
import { nodeArgs } from './options.ts';
import type { Child } from './processes.ts';
import type { Teardown } from './teardown.ts';

// What the pipeline benches share: batches sent through the public API, pipelines started as
// processes of their own, and event statuses read straight from the database.

// Sends one batch; resolves with how many were accepted, rejects on anything but a 202.
export async function postBatch(service: BenchService, agent: ReturnType<typeof newAgent>, body: Buffer): Promise<number> {
  const response = await send(signedTarget(service, 'signed POST /v1/batches', '/v1/batches', body), agent);
  const counts = batchCounts(response);
  if (response.status !== 202 || !counts) throw new Error(`POST /v1/batches answered ${answered(response)}`);
  return counts.accepted;
}

// Sends `batches` batches in order over `connections` keep-alive loops (each takes the next batch
// as soon as its previous one was answered); every event must be accepted. Resolves with the
// seconds from the first request to the last 202.
export async function ingestAll(
  service: BenchService,
  connections: number,
  batches: number,
  body: (batch: number) => Buffer,
  sizeOf: (batch: number) => number,
): Promise<number> {
  const agent = newAgent(connections);
  let next = 0;
  const started = performance.now();
  try {
    const loop = async () => {
      while (next < batches) {
        const batch = next++;
        const accepted = await postBatch(service, agent, body(batch));
        if (accepted !== sizeOf(batch)) throw new Error(`batch ${batch}: ${accepted} of ${sizeOf(batch)} events accepted`);
      }
    };
    await Promise.all(Array.from({ length: connections }, loop));
  } finally {
    agent.destroy();
  }
  return (performance.now() - started) / 1000;
}

// Batch items (JSON text) in request bodies of at most `size` events each.
export function batchesOf(items: string[], size = 1000): Array<{ body: Buffer; events: number }> {
  const batches: Array<{ body: Buffer; events: number }> = [];
  for (let i = 0; i < items.length; i += size) {
    const slice = items.slice(i, i + size);
    batches.push({ body: batchBody(slice), events: slice.length });
  }
  return batches;
}

// Sends prepared batches in order over `connections` connections; seconds from first request to last 202.
export function ingestBatches(service: BenchService, connections: number, batches: Array<{ body: Buffer; events: number }>): Promise<number> {
  return ingestAll(service, connections, batches.length, (i) => batches[i]!.body, (i) => batches[i]!.events);
}

export type PipelineName = 'canonical' | 'graph' | 'aggregates' | 'detect' | 'imports';

export interface StartedPipeline {
  child: Child;
  // performance.now() when the "<name> pipeline running" line arrived.
  readyAt: number;
}

// `svc run pipeline <pipeline>` on the service's data directory, once it says it is running, with
// the node options it is deployed with (detection's). BENCH_PIPELINE_NODE_ARGS adds node options
// to it (e.g. --cpu-prof), and BENCH_DETECT_NODE_ARGS to the detect pipeline alone.
// env: variables added to the pipeline's environment (e.g. PGAPPNAME, to tell its backends).
export async function startPipeline(teardown: Teardown, service: BenchService, pipeline: PipelineName, name: string, env: NodeJS.ProcessEnv = {}): Promise<StartedPipeline> {
  const options = [...(pipeline === 'detect' ? [...DETECTION_NODE_OPTIONS, ...nodeArgs('BENCH_DETECT_NODE_ARGS')] : []), ...nodeArgs('BENCH_PIPELINE_NODE_ARGS')];
  const args = [...options, 'bin/svc.js', 'run', 'pipeline', pipeline];
  const { child } = await startNode(teardown, name, args, { ...service.env, ...env }, new RegExp(`${pipeline} pipeline running`));
  return { child, readyAt: performance.now() };
}

// The bench tenant's events of one family by status, for external ids with a prefix (a scan:
// for progress lines and final checks, not for tight polls).
export async function statusCounts(db: pg.Client, object: string, prefix: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ status: string; events: number }>(
    `SELECT status, count(*)::int AS events FROM inbox_events
      WHERE tenant_id = $1 AND object = $2 AND starts_with(external_id, $3) GROUP BY status ORDER BY status`,
    [TENANT, object, prefix],
  );
  return new Map(rows.map((r) => [r.status, r.events]));
}
