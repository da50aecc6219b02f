// What each API process counts of the live feed it answers, for conformance drift (decision
// 0077): per tenant, family and five-minute bucket of receipt, the items accepted and the items
// refused by their first finding. Counting is a map update per item; the counts reach PostgreSQL
// in one statement every few seconds (store.ts), so the acceptance path gains no round trip. A
// process that dies loses at most its last few seconds of counts: drift is judged over an hour.
import type { Family } from '../../schemas/families/index.ts';
import { FAMILIES } from '../../schemas/families/index.ts';
import type { FieldError } from '../../schemas/problem.ts';
import type { TallyRow } from './store.ts';

export const BUCKET_MS = 5 * 60_000;
// Paths are the customer's member names: bounded, and so are the distinct problems one tenant's
// family can add to a bucket (a feed sending a new unknown member in every item would otherwise
// add a row per item).
const PATH_CHARS = 200;
const PROBLEMS_PER_BUCKET = 50;
export const OTHER_PROBLEMS = '(other)';

export interface ItemOutcome {
  // The item as received ({object, event}); its family is its object.
  value: unknown;
  // Where the item sits in the request body (["events", "3"] in a batch, [] otherwise).
  prefix: readonly string[];
  // Its findings; none when it was accepted.
  errors: readonly FieldError[];
}

export class ConformanceTally {
  private counts = new Map<string, TallyRow>();
  // The distinct problems each tenant's family has had in a bucket, by bucket. Kept across
  // flushes (the cap is per bucket, not per flush); buckets before the previous one are dropped.
  private problems = new Map<number, Map<string, Set<string>>>();

  // Counts one request's items, received at `at`. An item whose object names no family is not
  // counted: nothing tells which feed it belongs to.
  note(tenantId: string, at: Date, items: readonly ItemOutcome[]): void {
    const bucket = Math.floor(at.getTime() / BUCKET_MS) * BUCKET_MS;
    for (const item of items) {
      const family = familyOf(item.value);
      if (family === undefined) continue;
      const first = item.errors[0];
      const problem = first ? { code: first.code, path: itemPath(first.path, item.prefix) } : { code: '', path: '' };
      this.add(tenantId, family, bucket, problem);
    }
  }

  // The counts so far, emptied: the caller adds them to the store (and hands them back with
  // restore when that fails, so they wait for the next flush).
  take(): TallyRow[] {
    const rows = [...this.counts.values()];
    this.counts = new Map();
    return rows;
  }

  restore(rows: readonly TallyRow[]): void {
    for (const row of rows) this.add(row.tenantId, row.family, row.bucket.getTime(), row, row.items);
  }

  private add(tenantId: string, family: string, bucket: number, problem: { code: string; path: string }, items = 1): void {
    const group = `${tenantId}\u0000${family}\u0000${bucket}`;
    let { code, path } = problem;
    if (code !== '' && path !== OTHER_PROBLEMS) {
      const seen = this.problemsOf(bucket, group);
      const problem = `${code}\u0000${path}`;
      if (!seen.has(problem)) {
        if (seen.size >= PROBLEMS_PER_BUCKET) path = OTHER_PROBLEMS;
        else seen.add(problem);
      }
    }
    const key = `${group}\u0000${code}\u0000${path}`;
    const row = this.counts.get(key);
    if (row) row.items += items;
    else this.counts.set(key, { tenantId, family, bucket: new Date(bucket), code, path, items });
  }

  private problemsOf(bucket: number, group: string): Set<string> {
    let groups = this.problems.get(bucket);
    if (!groups) {
      groups = new Map();
      this.problems.set(bucket, groups);
      // Requests answered across a bucket's end may still count in the previous one.
      for (const older of this.problems.keys()) if (older < bucket - BUCKET_MS) this.problems.delete(older);
    }
    let seen = groups.get(group);
    if (!seen) groups.set(group, (seen = new Set()));
    return seen;
  }
}

function familyOf(value: unknown): Family | undefined {
  const object = typeof value === 'object' && value !== null ? (value as { object?: unknown }).object : undefined;
  return typeof object === 'string' && Object.hasOwn(FAMILIES, object) ? (object as Family) : undefined;
}

// A finding's path relative to its item, array indices as *: the same problem in any item, or
// in any element of an array, is one problem. Control characters of a member name become U+FFFD:
// PostgreSQL text cannot hold NUL, and one such path would make every later flush of the process
// fail, for every tenant.
export function itemPath(path: string, prefix: readonly string[]): string {
  const head = prefix.length > 0 ? `${prefix.join('.')}.` : '';
  const own = head !== '' && path.startsWith(head) ? path.slice(head.length) : path;
  const general = own
    .split('.')
    .map((segment) => (/^\d+$/.test(segment) ? '*' : segment))
    .join('.')
    .replace(/[\u0000-\u001f\u007f]/g, '\ufffd');
  return general.length > PATH_CHARS ? general.slice(0, PATH_CHARS) : general;
}
