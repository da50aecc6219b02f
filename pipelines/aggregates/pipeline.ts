import type { AggregateStore } from '../../platform/aggregates/port.ts';
import type { Bus, BusRecord, Consumer } from '../../platform/bus/port.ts';
import type { CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import { AGGREGATES } from '../groups.ts';
import { activitiesOf } from './activities.ts';

export interface AggregatesPipeline {
  consumer: Consumer;
  stop: () => Promise<void>;
}

// pipelines/aggregates: movement change records in, behavioural activities out. One store call
// per batch of a partition. Idempotent by construction: the store keys each activity by its
// subject, time, movement and direction, so a redelivered batch inserts nothing.
// A failed batch is reported by the bus (its onError) and retried from the same offset.
export async function startAggregatesPipeline(options: { bus: Bus; store: AggregateStore }): Promise<AggregatesPipeline> {
  const handle = async (records: BusRecord[]) => {
    const activities = records.flatMap((record) => {
      const change = JSON.parse(record.value.toString('utf8')) as CanonicalChange;
      return change.object === 'movement' ? activitiesOf(change) : [];
    });
    if (activities.length > 0) await options.store.record(activities);
  };
  const consumer = await options.bus.consume({ ...AGGREGATES, handle });
  return { consumer, stop: () => consumer.stop() };
}
