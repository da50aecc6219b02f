// Poison records never stall a partition. Every bus hands its batches to a group's handler through
// here: a batch that fails with an error that is not transient (transient.ts) is split in halves,
// each handled on its own, in order, down to single records; a record that still fails alone after
// `attempts` tries is parked (store.ts) and the batch resolves, so the bus commits past it. A
// transient error is thrown on to the bus, which retries the same records with a backoff for as
// long as it takes: an engine away is an outage to wait out, not a reason to park.
//
// Halving costs about 2·log2(n) calls per poison record in a batch of n, and keeps each
// partition's records in order: the halves are contiguous and handled left to right. The records of
// a batch handled before a transient error are delivered again with the batch (handlers are
// idempotent). A parked record loses its order relative to later records of its key, and a group
// reading `after` this one counts it as done: the price of moving on.
import type { BusRecord } from '../port.ts';
import { describeError, type ParkedRecordStore } from './store.ts';
import { isTransient } from './transient.ts';

export interface ParkingPolicy {
  // Tries of a record alone before it is parked (the first included).
  attempts: number;
  // Wait before the second try alone; doubled for each further one.
  backoffMs: number;
  // How often a group's members look for records an operator asked to replay.
  replayPollMs: number;
}

const DEFAULT_PARKING: ParkingPolicy = { attempts: 3, backoffMs: 100, replayPollMs: 2_000 };

type Handle = (records: BusRecord[]) => Promise<void>;

export class ParkingLot {
  readonly policy: ParkingPolicy;

  constructor(
    readonly store: ParkedRecordStore,
    private readonly onError: (error: unknown) => void = () => undefined,
    policy: Partial<ParkingPolicy> = {},
  ) {
    this.policy = { ...DEFAULT_PARKING, ...policy };
  }

  // The group's handler as the bus calls it. Once `stopped` says so, a batch being taken apart is
  // abandoned (thrown, so not committed): whoever reads the partition next delivers it again,
  // rather than this member parking record after record on its way out.
  guard(group: string, handle: Handle, stopped: () => boolean = () => false): Handle {
    const abandon = () => {
      if (stopped()) throw new ConsumerStopped(group);
    };
    const alone = async (record: BusRecord, first: unknown): Promise<void> => {
      let last = first;
      for (let attempt = 2; attempt <= this.policy.attempts; attempt++) {
        await sleep(this.policy.backoffMs * 2 ** (attempt - 2));
        abandon();
        try {
          await handle([record]);
          return;
        } catch (error) {
          if (isTransient(error)) throw error;
          this.onError(error);
          last = error;
        }
      }
      await this.store.park(group, record, last, this.policy.attempts);
      this.onError(new Error(`group ${group} parked ${record.topic} partition ${record.partition} offset ${record.offset}: ${describeError(last)}`));
    };
    const run = async (records: BusRecord[]): Promise<void> => {
      if (records.length === 0) return;
      abandon();
      try {
        await handle(records);
        return;
      } catch (error) {
        if (isTransient(error)) throw error;
        this.onError(error);
        if (records.length === 1) return alone(records[0]!, error);
      }
      const half = Math.ceil(records.length / 2);
      await run(records.slice(0, half));
      await run(records.slice(half));
    };
    return run;
  }

  // While the consumer runs: hands the group's records an operator asked to replay (`svc
  // deadletters replay`) to its handler, one at a time. Each member of the group does this; a claim
  // on the record's row makes one of them take each (store.ts).
  replays(group: string, handle: Handle): { stop: () => Promise<void> } {
    let stopped = false;
    let wake: (() => void) | undefined;
    const loop = (async () => {
      while (!stopped) {
        try {
          while (!stopped && (await this.store.replayNext(group, (record) => handle([record])))) {
            // One after another until none is waiting.
          }
        } catch (error) {
          this.onError(error);
        }
        if (stopped) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, this.policy.replayPollMs).unref();
        });
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        await loop;
      },
    };
  }
}

class ConsumerStopped extends Error {
  constructor(group: string) {
    super(`a member of group ${group} stopped while taking a failed batch apart`);
    this.name = 'ConsumerStopped';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
