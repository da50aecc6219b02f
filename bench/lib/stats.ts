// Summary statistics and plain-text tables for the benchmark reports.

// Nearest-rank percentile of an ascending array; NaN when it is empty.
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

// The item with the highest score (the first of equals); items must not be empty.
export function best<T>(items: T[], score: (item: T) => number): T {
  return items.reduce((a, b) => (score(b) > score(a) ? b : a));
}

// "3 x HTTP 503, 1 x socket hang up", or "no errors".
export function failuresText(failures: Map<string, number>): string {
  if (failures.size === 0) return 'no errors';
  return [...failures].map(([reason, count]) => `${count} x ${reason}`).join(', ');
}

export function failureCount(failures: Map<string, number>): number {
  return [...failures.values()].reduce((a, b) => a + b, 0);
}

// Rows as aligned columns: the first (a name) left-aligned, the rest (numbers) right-aligned.
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')).join('\n');
}

// Each case's p50 and p95 beside the baseline route's, measured in the same run, with the p95
// against its target.
export function printAgainstBaseline(baseline: { p50: number; p95: number }, cases: Record<string, { p50: number; p95: number }>, targetP95Ms: number): void {
  console.log(`baseline (session)  p50 ${baseline.p50.toFixed(2)} ms  p95 ${baseline.p95.toFixed(2)} ms`);
  for (const [name, r] of Object.entries(cases)) {
    console.log(
      `${name.padEnd(19)} p50 ${r.p50.toFixed(2)} ms  p95 ${r.p95.toFixed(2)} ms  (${(r.p95 / baseline.p95).toFixed(1)}x baseline p95)  ${r.p95 <= targetP95Ms ? 'PASS' : 'FAIL'} (target p95 <= ${targetP95Ms} ms)`,
    );
  }
}
