import type { Bus, Consumer } from '../../platform/bus/port.ts';
import type { GraphStore } from '../../platform/graph/port.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { GRAPH } from '../groups.ts';
import { graphChangeOf } from './changes.ts';

export interface GraphPipeline {
  consumer: Consumer;
  stop: () => Promise<void>;
}

// pipelines/graph: canonical change records in, the network out. One store call per batch of a
// partition; the store is idempotent on the event id, so a redelivered batch changes nothing.
export async function startGraphPipeline(options: { bus: Bus; store: GraphStore }): Promise<GraphPipeline> {
  const consumer = await options.bus.consume({
    ...GRAPH,
    handle: (records) => options.store.apply(records.map((r) => graphChangeOf(JSON.parse(r.value.toString('utf8')) as CanonicalChange))),
  });
  return { consumer, stop: () => consumer.stop() };
}
