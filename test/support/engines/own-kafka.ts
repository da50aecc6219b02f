// A Kafka broker of one test's own, which the test may stop and start again: the run-wide broker
// (engines/index.ts) is shared by every test file, so no test may take it away. Started through
// platform/local-engines on a temporary data directory; its ports stay recorded in that
// directory's state.json, so it comes back on the same address with the same log, as a broker
// restarted in place does.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalEngines, stopLocalEngines } from '../../../platform/local-engines/index.ts';

export interface OwnKafka {
  brokers: string;
  // SIGTERM (Kafka's controlled shutdown), SIGKILL only should it not end within graceMs: resolves
  // with which it took.
  stop: () => Promise<string>;
  // Resolves once it answers again (same address, same data).
  start: () => Promise<void>;
  // Stops it and removes its data.
  close: () => Promise<void>;
}

const GRACE_MS = 20_000;

export async function startOwnKafka(): Promise<OwnKafka> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-own-kafka-'));
  const log = (line: string) => process.stderr.write(`own kafka: ${line}\n`);
  // Tied to this process (not detached): should the test die, the kernel stops the broker too.
  const up = async () => (await startLocalEngines({ dataDir, engines: ['kafka'], detached: false, log })).env.KAFKA_BROKERS!;
  let brokers: string;
  try {
    brokers = await up();
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const stop = async () => (await stopLocalEngines({ dataDir, engines: ['kafka'], graceMs: GRACE_MS, log }))[0]!.outcome;
  return {
    brokers,
    stop,
    start: async () => {
      const again = await up();
      if (again !== brokers) throw new Error(`the broker came back on ${again}, not ${brokers}`);
    },
    close: async () => {
      await stop().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
