// The subject's activities with someone else. A party moving money between its own accounts
// deals with nobody: the aggregate store gives the party both an 'out' and an 'in' activity of
// that movement, and an account sees its sibling account (or, paying itself, itself) as a
// counterparty. Counting those would
// make one internal sweep look like two movements (structuring, split transfers, volume), so
// detectors that count dealings read them through here.
import { WINDOWS, type ActivityRecord, type WindowName } from '../../../../platform/aggregates/port.ts';
import type { SubjectContext } from '../../framework/context.ts';

// Enough for any customer's week; a subject with more is a high-volume business whose listing
// is reported as truncated (the window statistics stay exact).
export const LISTING_LIMIT = 2000;

export interface Dealings {
  // Latest first.
  records: ActivityRecord[];
  // The store had more activities in the window than LISTING_LIMIT.
  truncated: boolean;
}

// Read once per evaluation and window start: most of the detectors that count dealings read the
// same day or week, and the listing they share is never changed by any of them.
export function dealings(ctx: SubjectContext, from: Date): Promise<Dealings> {
  return ctx.once(`derived:dealings:${from.getTime()}`, () => readDealings(ctx, from));
}

async function readDealings(ctx: SubjectContext, from: Date): Promise<Dealings> {
  const all = await ctx.activities(from, { limit: LISTING_LIMIT });
  const truncated = all.length >= LISTING_LIMIT;
  if (ctx.subject.kind === 'party') {
    const seen = new Map<string, Set<string>>();
    for (const record of all) {
      if (record.counterparty !== null) continue;
      const directions = seen.get(record.movementId) ?? new Set<string>();
      directions.add(record.direction);
      seen.set(record.movementId, directions);
    }
    const internal = new Set([...seen].filter(([, directions]) => directions.size === 2).map(([id]) => id));
    return { records: all.filter((record) => !internal.has(record.movementId)), truncated };
  }
  // The subject itself among them: an account paying itself (a reinvestment) pays nobody either,
  // and would be seen twice, once out and once in.
  const own = new Set([ctx.subject.id, ...(await ctx.accountsOfParty())].map((account) => `account:${account}`));
  return { records: all.filter((record) => record.counterparty === null || !own.has(record.counterparty)), truncated };
}

// Money counted once per movement: a party sees a movement once per side it is on.
export function distinctMovements(records: readonly ActivityRecord[]): ActivityRecord[] {
  const seen = new Set<string>();
  return records.filter((record) => {
    if (seen.has(record.movementId)) return false;
    seen.add(record.movementId);
    return true;
  });
}

export function isRound(record: ActivityRecord, majorUnits: number): boolean {
  const unit = BigInt(majorUnits) * 10n ** BigInt(record.amount.scale);
  return unit > 0n && record.amount.value % unit === 0n;
}

// The start of a named window ending at the evaluation instant: the window is (start, ctx.at].
export function windowStart(ctx: SubjectContext, window: WindowName): Date {
  return new Date(ctx.at.getTime() - WINDOWS[window]);
}
