import { expect, it } from 'vitest';
import { GroupLane } from './group-lane.ts';

// A lane whose runs wait until released, recording the groups it was given.
function gatedLane(options: { failOn?: string; maxWeight?: number } = {}) {
  const groups: string[][] = [];
  const gates: Array<() => void> = [];
  const lane = new GroupLane<string>(
    async (items) => {
      groups.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      if (options.failOn && items.includes(options.failOn)) throw new Error(`cannot run ${options.failOn}`);
    },
    { weight: (item) => item.length, ...(options.maxWeight ? { maxWeight: options.maxWeight } : {}) },
  );
  const releaseAll = async () => {
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gates.splice(0).forEach((open) => open());
    }
  };
  return { lane, groups, releaseAll, gates };
}

it('runs the first item alone and what arrives meanwhile together, one group at a time', async () => {
  const { lane, groups, releaseAll, gates } = gatedLane();
  const done: string[] = [];
  const submitted = ['a', 'b', 'c'].map((item) => lane.submit(item).then(() => done.push(item)));
  await new Promise((resolve) => setImmediate(resolve));
  expect(groups).toEqual([['a']]);
  expect(gates).toHaveLength(1);
  await releaseAll();
  await Promise.all(submitted);
  expect(groups).toEqual([['a'], ['b', 'c']]);
  expect(done).toEqual(['a', 'b', 'c']);
});

it('bounds a group by weight, always taking at least one item', async () => {
  const { lane, groups, releaseAll } = gatedLane({ maxWeight: 4 });
  const submitted = ['x', 'aa', 'bb', 'c', 'dddddd', 'e'].map((item) => lane.submit(item));
  await releaseAll();
  await Promise.all(submitted);
  expect(groups).toEqual([['x'], ['aa', 'bb'], ['c'], ['dddddd'], ['e']]);
});

it('runs a failed group again item by item: only the item that cannot run fails', async () => {
  const { lane, groups, releaseAll } = gatedLane({ failOn: 'bad' });
  const outcomes = ['first', 'ok1', 'bad', 'ok2'].map((item) =>
    lane.submit(item).then(
      () => `${item}: done`,
      (error: Error) => `${item}: ${error.message}`,
    ),
  );
  await releaseAll();
  expect(await Promise.all(outcomes)).toEqual(['first: done', 'ok1: done', 'bad: cannot run bad', 'ok2: done']);
  expect(groups).toEqual([['first'], ['ok1', 'bad', 'ok2'], ['ok1'], ['bad'], ['ok2']]);
});
