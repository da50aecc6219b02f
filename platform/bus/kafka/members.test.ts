import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/test-database.ts';
import { CONTRACT_TOPICS, eventually, writeRecords } from '../contract.test-kit.ts';
import type { Consumer } from '../port.ts';
import { describeWithKafka } from './kafka-engines.test-kit.ts';
import { startKafkaHarness, type KafkaHarness } from './testing.ts';

// Live members on the Kafka bus (svc status) around an outage: a member retrying a batch in place
// for longer than its session timeout, as one does while Neo4j or ClickHouse is away, drops out of
// the broker's group, yet its process is alive and will go on. Counted as the broker counts
// (describeGroups) it read 0 live members; counted by the members' own beats, it stays 1.
describeWithKafka('Kafka bus members', ({ brokers, registryUrl }) => {
  let db: TestDatabase;
  let harness: KafkaHarness;
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // The harness's session timeout is 6 s.
    harness = await startKafkaHarness({ brokers, registryUrl, pool: db.pool, topics: CONTRACT_TOPICS });
  });
  afterAll(async () => {
    for (const consumer of consumers) await consumer.stop().catch(() => undefined);
    await harness?.close();
    await db?.drop();
  });

  const brokerCount = async (group: string) => {
    const admin = await harness.bus.adminClient();
    const { groups } = await admin.describeGroups([harness.names.group(group)]);
    return groups[0]?.members.length ?? 0;
  };

  it('counts a member busy with one batch past its session timeout as live, once', async () => {
    const group = 'busy-member';
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    consumers.push(
      await harness.bus.consume({
        group,
        topics: CONTRACT_TOPICS,
        // The first batch takes as long as an engine outage: no heartbeat reaches the broker.
        handle: async () => {
          if (calls++ === 0) await held;
        },
      }),
    );
    await writeRecords(db.pool, [{ topic: 'canonical.party', key: 'acme/party/busy', seq: 1 }]);
    await harness.settle();
    await eventually(() => calls > 0, 'the first batch');
    // The broker has given the member up; its process has not.
    await eventually(async () => (await brokerCount(group)) === 0, 'the broker dropping the member', 20_000);
    expect(await harness.bus.members(group)).toBe(1);
    release();
    await eventually(async () => (await brokerCount(group)) === 1, 'the member back in the group', 30_000);
    expect(await harness.bus.members(group)).toBe(1);
  }, 90_000);
});
