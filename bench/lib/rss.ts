import { readFileSync, writeFileSync } from 'node:fs';

// Resident memory of another process (Linux /proc only): VmRSS sampled on an interval, and VmHWM,
// the kernel's own peak, which can be reset first so that it covers only the sampled window.

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) : undefined;
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
  stop: () => RssPeak;
}

// Starts sampling pid every intervalMs. Writing 5 to /proc/<pid>/clear_refs resets VmHWM to the
// current RSS (needs the same user or root); when that is refused the HWM is the lifetime peak.
export function sampleRss(pid: number, intervalMs = 100): RssSampler {
  let hwmReset = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    hwmReset = true;
  } catch {
    hwmReset = false;
  }
  let maxKiB: number | undefined;
  let samples = 0;
  const sample = () => {
    const kib = statusKiB(pid, 'VmRSS');
    if (kib === undefined) return;
    samples++;
    if (maxKiB === undefined || kib > maxKiB) maxKiB = kib;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
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
