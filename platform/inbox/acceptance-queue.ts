import { coalescing } from '../batching/coalesce.ts';
import type { Pool } from '../postgres/pool.ts';
import { acceptEvents, type AcceptOutcome, type PreparedEvent } from './accept-events.ts';

interface Submission {
  events: PreparedEvent[];
  resolve: (outcomes: AcceptOutcome[]) => void;
  reject: (error: unknown) => void;
}

const MAX_EVENTS_PER_COMMIT = 5_000;
const RETRYABLE = new Set(['40001', '40P01']);

// Group commit for acceptance. Submissions that arrive while a commit is in flight wait and go
// together in the next one: one statement and one WAL flush for many requests, each answered
// only after the commit that holds its events. A submission is never split across commits, so a
// batch is accepted in one transaction.
export class AcceptanceQueue {
  private queue: Submission[] = [];
  private inFlight = 0;
  private readonly schedulePump = coalescing(() => this.pump());

  constructor(
    private readonly pool: Pool,
    private readonly maxInFlight = 2,
  ) {}

  submit(events: PreparedEvent[]): Promise<AcceptOutcome[]> {
    if (events.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.schedulePump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const group: Submission[] = [];
      let size = 0;
      while (this.queue.length > 0 && (group.length === 0 || size + this.queue[0]!.events.length <= MAX_EVENTS_PER_COMMIT)) {
        const next = this.queue.shift()!;
        group.push(next);
        size += next.events.length;
      }
      this.inFlight++;
      void this.commit(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async commit(group: Submission[]): Promise<void> {
    const events = group.flatMap((s) => s.events);
    let outcomes: AcceptOutcome[];
    try {
      outcomes = await acceptEvents(this.pool, events).catch((error: { code?: string }) => {
        if (error.code && RETRYABLE.has(error.code)) return acceptEvents(this.pool, events);
        throw error;
      });
    } catch (error) {
      for (const submission of group) submission.reject(error);
      return;
    }
    let offset = 0;
    for (const submission of group) {
      submission.resolve(outcomes.slice(offset, offset + submission.events.length));
      offset += submission.events.length;
    }
  }
}
