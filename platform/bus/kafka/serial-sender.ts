// The relay's sends to Kafka: one at a time, and one that failed for a transient reason repeated
// unchanged, in place, before anything else is sent.
//
// Why (kafkajs 2.2.4's idempotent producer): it numbers a request's records per partition when it
// sends the request and, should the request fail, takes the numbers back for every partition in
// it, also for those the broker had appended (a broker going away before it answered, a partition
// without its leader yet). Sent again unchanged, the request carries the same numbers, and the
// broker recognises the batches it already holds (it answers with their offsets and writes
// nothing). Anything else sent in between, or the same rows grouped otherwise (the log reads the
// outbox again after a failed batch, maybe with more rows), reuses those numbers for other
// records: the broker refuses that as out of order (OutOfOrderSequenceException, not retriable),
// and kafkajs's numbering of the partition never recovers. Seen with a broker restart while the
// relay ran (faults.test.ts): the rows were parked, then every later row of those partitions.
//
// Left as it was: a send failing for a reason that is not transient is thrown at once (the
// parking lot then takes the batch apart), and so is one failing while the relay stops.

import type { Producer, TopicMessages } from 'kafkajs';
import { isTransient } from '../parking/transient.ts';

const BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 10_000;

export class SerialSender {
  private queue: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly producer: Producer,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  // Sends the parts in order, after every send asked for before; resolves once the broker has
  // acknowledged them all (acks=all).
  send(parts: Iterable<TopicMessages[]>): Promise<void> {
    const sent = this.queue.then(() => this.sendAll(parts));
    this.queue = sent.catch(() => undefined);
    return sent;
  }

  // A failed send is not repeated from now on: the relay is stopping.
  stop(): void {
    this.stopping = true;
  }

  private async sendAll(parts: Iterable<TopicMessages[]>): Promise<void> {
    for (const part of parts) {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.producer.sendBatch({ acks: -1, topicMessages: part });
          break;
        } catch (error) {
          if (this.stopping || !isTransient(error)) throw error;
          this.onError(error);
          await sleep(Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** Math.min(attempt - 1, 16)));
        }
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
