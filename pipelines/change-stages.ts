import { performance } from 'node:perf_hooks';
import type { BusRecord } from '../platform/bus/port.ts';
import type { Clock } from '../platform/clock.ts';
import { appendStageOnce, type EventKey } from '../platform/inbox/event-stages.ts';
import type { Pool } from '../platform/postgres/pool.ts';
import type { CanonicalChange } from '../schemas/bus/canonical-change.ts';

export interface ChangeStageOptions {
  pool: Pool;
  // The stage's name in an event's stage_history: the consumer group's.
  stage: string;
  clock: Clock;
  // What the stage's entry says of a record's event beyond `ok` (null: nothing). Events are
  // written in one statement per distinct detail.
  detailOf?: (change: CanonicalChange) => Record<string, unknown> | null;
}

// A pipeline over canonical change records, with its progress on each event shown by
// GET /v1/events/{id}: once the handler has done its work on a batch, every event the batch
// carried gets one `ok` entry of this stage, with the batch's duration. The entry is written after
// the pipeline's own effects (which may live in another engine), so it never claims work that was
// not done; a crash between the two redelivers the batch, whose handling is idempotent.
export function recordingStages(options: ChangeStageOptions, handle: (changes: CanonicalChange[]) => Promise<void>): (records: BusRecord[]) => Promise<void> {
  const worker = `${options.stage}:${process.pid}`;
  return async (records) => {
    const started = performance.now();
    const changes = records.map((record) => JSON.parse(record.value.toString('utf8')) as CanonicalChange);
    await handle(changes);
    const entry = { at: options.clock.now(), worker, durationMs: Math.round(performance.now() - started) };
    for (const { detail, events } of eventsOf(changes, options.detailOf)) await appendStageOnce(options.pool, options.stage, events, { ...entry, detail });
  };
}

// The batch's events once each, grouped by the detail of their entry.
function eventsOf(changes: readonly CanonicalChange[], detailOf: ChangeStageOptions['detailOf']): Array<{ detail: Record<string, unknown> | null; events: EventKey[] }> {
  const groups = new Map<string, { detail: Record<string, unknown> | null; events: Map<string, EventKey> }>();
  for (const c of changes) {
    const detail = detailOf?.(c) ?? null;
    const group = detail === null ? 'null' : JSON.stringify(detail);
    let entry = groups.get(group);
    if (!entry) groups.set(group, (entry = { detail, events: new Map() }));
    entry.events.set(`${c.tenant_id}\u0000${c.event_id}`, { tenantId: c.tenant_id, eventId: c.event_id });
  }
  return [...groups.values()].map(({ detail, events }) => ({ detail, events: [...events.values()] }));
}
