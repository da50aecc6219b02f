import { performance } from 'node:perf_hooks';
import type { Log } from './teardown.ts';

// A bench's progress log: on stderr, so that stdout holds only the report, each line stamped with
// the seconds since the log was made (at the bench's start), to show where the time went.
export function elapsedLog(): Log {
  const started = performance.now();
  return (line) => {
    process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  };
}
