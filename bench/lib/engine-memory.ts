import type { EngineStatus } from '../../platform/local-engines/index.ts';
import { statusKiB } from './rss.ts';

// Peak resident memory of the engines a bench started through platform/local-engines (their
// pids are in the EngineStatus it returns). An engine started for the bench lives only within it,
// so its VmHWM (the kernel's own peak since the process started) is already the peak over the
// bench and is not reset; VmRSS sampled on an interval beside it shows whether the peak held or
// was a moment (a JVM's heap grows and stays, a query's buffers come and go). Read before the
// engine is stopped: a process gone has no /proc entry.

export interface EngineMemory {
  engine: string;
  version: string;
  pid: number | undefined;
  // Bytes; undefined when /proc could not be read.
  hwmBytes: number | undefined;
  sampledMaxBytes: number | undefined;
  samples: number;
  // The higher of the two.
  peakBytes: number | undefined;
}

export interface EngineMemoryWatch {
  // Stops sampling and reads the VmHWMs; the same figures on every call after the first.
  stop: () => EngineMemory[];
}

export function watchEngineMemory(engines: EngineStatus[], intervalMs = 200): EngineMemoryWatch {
  const watched = engines.map((engine) => ({ engine, maxKiB: undefined as number | undefined, samples: 0 }));
  const sample = () => {
    for (const entry of watched) {
      const kib = entry.engine.pid === undefined ? undefined : statusKiB(entry.engine.pid, 'VmRSS');
      if (kib === undefined) continue;
      entry.samples++;
      if (entry.maxKiB === undefined || kib > entry.maxKiB) entry.maxKiB = kib;
    }
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  // An engine that hangs must not keep the bench alive for the sampler's sake.
  timer.unref();
  let result: EngineMemory[] | undefined;
  return {
    stop: () => {
      if (result) return result;
      clearInterval(timer);
      sample();
      result = watched.map(({ engine, maxKiB, samples }) => {
        const hwmKiB = engine.pid === undefined ? undefined : statusKiB(engine.pid, 'VmHWM');
        const known = [hwmKiB, maxKiB].filter((v): v is number => v !== undefined);
        return {
          engine: engine.name,
          version: engine.version,
          pid: engine.pid,
          hwmBytes: hwmKiB === undefined ? undefined : hwmKiB * 1024,
          sampledMaxBytes: maxKiB === undefined ? undefined : maxKiB * 1024,
          samples,
          peakBytes: known.length > 0 ? Math.max(...known) * 1024 : undefined,
        };
      });
      return result;
    },
  };
}
