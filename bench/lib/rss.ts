import { writeFileSync } from 'node:fs';
import { readIfPresent } from './proc.ts';

// Resident memory of another process (Linux /proc only): VmRSS sampled on an interval, and VmHWM,
// the kernel's own peak, which can be reset first so that it covers only the sampled window.

// VmRSS or VmHWM of pid in KiB; undefined when it cannot be read (the process is gone).
export function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const match = readIfPresent(`/proc/${pid}/status`)?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) : undefined;
}

// Writing 5 to /proc/<pid>/clear_refs resets VmHWM to the current RSS (needs the same user or
// root); false when that is refused, and the HWM is then the lifetime peak.
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface RssPeak {
  // Highest VmRSS seen by the sampler, in bytes (undefined when /proc could not be read).
  sampledMaxBytes: number | undefined;
  samples: number;
  // VmHWM when the sampler stopped, in bytes; covers the window only if hwmReset.
  hwmBytes: number | undefined;
  hwmReset: boolean;
}

export interface RssSampler {
  // A reading now, besides the interval's (e.g. at a progress mark), counted in the peak and the
  // samples like theirs; VmRSS in KiB, undefined when it could not be read.
  sample: () => number | undefined;
  stop: () => RssPeak;
}

// Starts sampling pid every intervalMs, after resetting its VmHWM. onInterval, when given, gets
// each reading the interval takes (in KiB), e.g. to log progress.
export function sampleRss(pid: number, intervalMs = 100, onInterval?: (kib: number) => void): RssSampler {
  const hwmReset = resetPeak(pid);
  let maxKiB: number | undefined;
  let samples = 0;
  const sample = () => {
    const kib = statusKiB(pid, 'VmRSS');
    if (kib === undefined) return undefined;
    samples++;
    if (maxKiB === undefined || kib > maxKiB) maxKiB = kib;
    return kib;
  };
  sample();
  const timer = setInterval(() => {
    const kib = sample();
    if (kib !== undefined) onInterval?.(kib);
  }, intervalMs);
  return {
    sample,
    stop: () => {
      clearInterval(timer);
      sample();
      const hwm = statusKiB(pid, 'VmHWM');
      return {
        sampledMaxBytes: maxKiB === undefined ? undefined : maxKiB * 1024,
        samples,
        hwmBytes: hwm === undefined ? undefined : hwm * 1024,
        hwmReset,
      };
    },
  };
}

// The higher of the sampled maximum and the VmHWM, the latter only when it covers just the window.
export function peakBytes(rss: RssPeak | undefined): number | undefined {
  const peaks = [rss?.sampledMaxBytes, rss?.hwmReset ? rss.hwmBytes : undefined].filter((v): v is number => v !== undefined);
  return peaks.length > 0 ? Math.max(...peaks) : undefined;
}

// Whole megabytes (MiB) for the reports, "n/a" when unknown.
export function mb(bytes: number | undefined): string {
  return bytes === undefined ? 'n/a' : (bytes / (1024 * 1024)).toFixed(0);
}
