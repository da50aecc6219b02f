import { describe, expect, it } from 'vitest';
import { every } from './periodic.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('every', () => {
  it('never runs a task while its previous run goes on, and stop waits for the run in progress', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    let finished = 0;
    const periodic = every(5, async () => {
      runs += 1;
      running += 1;
      most = Math.max(most, running);
      await sleep(40);
      running -= 1;
      finished += 1;
    });
    await sleep(100);
    await periodic.stop();
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(most).toBe(1);
    expect(finished).toBe(runs);
    await sleep(30);
    expect(runs).toBe(finished);
  });

  it('reports a failed run and goes on', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const periodic = every(5, async () => {
      runs += 1;
      throw new Error(`run ${runs}`);
    }, (error) => errors.push(error));
    await sleep(60);
    await periodic.stop();
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(errors).toHaveLength(runs);
  });
});
