import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { Clock } from '../../platform/clock.ts';
import type { GraphStore } from '../../platform/graph/port.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { recordingStages } from '../change-stages.ts';
import { GRAPH } from '../groups.ts';
import { graphChangeOf } from './changes.ts';

export interface GraphPipeline {
  consumer: Consumer;
  stop: () => Promise<void>;
}

// pipelines/graph: canonical change records in, the network out. One store call per batch of a
// partition; the store is idempotent on the event id, so a redelivered batch changes nothing.
// `pool` holds the events' stage history (a `graph` entry per event once the store has it).
export async function startGraphPipeline(options: { bus: Bus; store: GraphStore; pool: Pool; clock: Clock }): Promise<GraphPipeline> {
  const consumer = await options.bus.consume({
    ...GRAPH,
    handle: recordingStages({ pool: options.pool, stage: GRAPH.group, clock: options.clock }, (changes) => options.store.apply(changes.map(graphChangeOf))),
  });
  return { consumer, stop: () => consumer.stop() };
}
