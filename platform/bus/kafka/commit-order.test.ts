import { describe, expect, it } from 'vitest';
import { commitThenResolve } from './kafka-bus.ts';

// kafkajs fetches a partition from its resolved offset: a chunk must be resolved only once its
// commit is acknowledged, or a commit lost with the broker leaves the group's committed offset
// behind for good (seen: the Kafka outage case, lag that never drained).
function payload(commit: () => Promise<void>) {
  const calls: string[] = [];
  return {
    calls,
    batch: { topic: 't', partition: 3 },
    commitOffsetsIfNecessary: async (offsets?: { topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }) => {
      calls.push(`commit ${JSON.stringify(offsets)}`);
      await commit();
    },
    resolveOffset: (offset: string) => void calls.push(`resolve ${offset}`),
  };
}

describe('a handled chunk is committed, then resolved', () => {
  it('commits the next offset, then resolves the last handled one', async () => {
    const p = payload(async () => undefined);
    await commitThenResolve(p as never, '41');
    expect(p.calls).toEqual([`commit ${JSON.stringify({ topics: [{ topic: 't', partitions: [{ partition: 3, offset: '42' }] }] })}`, 'resolve 41']);
  });

  it('leaves the chunk unresolved when the commit fails, so it is fetched again', async () => {
    const p = payload(async () => {
      throw new Error('Connection error: connect ECONNREFUSED');
    });
    await expect(commitThenResolve(p as never, '41')).rejects.toThrow('ECONNREFUSED');
    expect(p.calls.filter((c) => c.startsWith('resolve'))).toEqual([]);
  });
});
