// The benchmarks' knobs come from BENCH_* environment variables; a malformed one stops the bench
// before anything is started rather than silently measuring something else.

// `what` names the value in the error message (e.g. "number of seconds").
export function positiveNumber(name: string, fallback: number, zeroAllowed = false, what = 'number'): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    throw new Error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} ${what}, not ${raw}`);
  }
  return value;
}

export function positiveInteger(name: string, fallback: number): number {
  const value = positiveNumber(name, fallback);
  if (!Number.isInteger(value)) throw new Error(`${name} must be a positive integer, not ${process.env[name]}`);
  return value;
}

// Extra node options for a child process, space-separated (e.g. "--cpu-prof --cpu-prof-dir=DIR").
export function nodeArgs(name: string): string[] {
  return (process.env[name] ?? '').split(' ').filter((arg) => arg !== '');
}
