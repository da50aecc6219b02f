// Conformance drift (decision 0077): a tenant's live feed of one family starts to be refused far
// more than it was. Judged over the last hour of tallies (tally.ts) against the week before it;
// announced once per drift with conformance.drift_detected on the operational channel (counts,
// codes and field paths only: nothing of the events' content). A family conforms again, silently,
// once its share falls to half the limit that started the drift, so a feed hovering at the limit
// is not announced over and over, or once it has sent nothing for the window's hour.
import type { PoolClient } from '../../platform/postgres/pool.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import type { Family } from '../../schemas/families/index.ts';
import type { OutgoingEvent } from '../webhooks/outgoing-events.ts';
import { BUCKET_MS } from './tally.ts';
import { countsOf, pruneTallies, recentCounts, startDrifting, stopDrifting, stopDriftingSilent, topProblems, type FamilyCounts } from './store.ts';

// The recent window: the twelve buckets ending with the current one (55 to 60 minutes).
const RECENT_BUCKETS = 12;
const BASELINE_MS = 7 * 86_400_000;
// A drift needs this many refused items in the recent window, at least this share of the items,
// and at least this many times the baseline's share: a few stray refusals, or a feed that was
// always this poor, is no change of conformance.
const DRIFT_LIMITS = { refused: 20, share: 0.05, factor: 5 };
const PROBLEMS_SHOWN = 5;

type Db = Pick<PoolClient, 'query'>;

const shareOf = (refused: number, received: number) => (received > 0 ? refused / received : 0);

interface Judged {
  recent: FamilyCounts;
  baseline: FamilyCounts | undefined;
}

// Whether the recent counts pass the drift limits, scaled (half of them keep a drift going).
function beyond({ recent, baseline }: Judged, scale: number): boolean {
  const share = shareOf(recent.refused, recent.received);
  const before = baseline ? shareOf(baseline.refused, baseline.received) : 0;
  return recent.refused >= DRIFT_LIMITS.refused * scale && share >= Math.max(DRIFT_LIMITS.share, DRIFT_LIMITS.factor * before) * scale;
}

// Judges every family with items in the recent window; returns the events of drifts that start.
// The week before is read only for families refused enough to drift or to keep drifting.
export async function sweepConformance(db: Db, now: Date): Promise<OutgoingEvent[]> {
  const current = Math.floor(now.getTime() / BUCKET_MS) * BUCKET_MS;
  const recentFrom = new Date(current - (RECENT_BUCKETS - 1) * BUCKET_MS);
  const baselineFrom = new Date(recentFrom.getTime() - BASELINE_MS);
  const to = new Date(current + BUCKET_MS);
  const recent = await recentCounts(db, recentFrom, to);
  const candidates = recent.filter((c) => c.refused >= DRIFT_LIMITS.refused / 2);
  const baselines = new Map((await countsOf(db, candidates, baselineFrom, recentFrom)).map((c) => [keyOf(c), c]));
  const judged = recent.map((c) => ({ recent: c, baseline: baselines.get(keyOf(c)) }));
  await stopDrifting(db, judged.filter((j) => !beyond(j, 0.5)).map((j) => j.recent), now);
  // A family that went silent is not judged, but it is no longer drifting either (no event: the
  // silence itself is coverage's); otherwise a feed resumed newly broken would go unannounced.
  await stopDriftingSilent(db, recentFrom, now);
  const started = new Set((await startDrifting(db, judged.filter((j) => beyond(j, 1)).map((j) => j.recent), now)).map(keyOf));
  const events: OutgoingEvent[] = [];
  for (const { recent: c, baseline } of judged.filter((j) => started.has(keyOf(j.recent)))) {
    const base = baseline ?? { received: 0, refused: 0 };
    const problems = await topProblems(db, c.tenantId, c.family, recentFrom, to, PROBLEMS_SHOWN);
    events.push({
      tenantId: c.tenantId,
      type: 'conformance.drift_detected',
      data: {
        family: c.family as Family,
        detected_at: now.toISOString(),
        window: { from: recentFrom.toISOString(), to: now.toISOString() },
        received: c.received,
        refused: c.refused,
        refused_share: round(shareOf(c.refused, c.received)),
        baseline: {
          from: baselineFrom.toISOString(),
          to: recentFrom.toISOString(),
          received: base.received,
          refused: base.refused,
          refused_share: base.received > 0 ? round(shareOf(base.refused, base.received)) : null,
        },
        // Only refusals' codes are tallied (tally.ts), all of them from the catalog.
        problems: problems.map((p) => ({ ...p, code: p.code as ErrorCode })),
      },
    });
  }
  await pruneTallies(db, baselineFrom);
  return events;
}

const keyOf = (c: { tenantId: string; family: string }) => `${c.tenantId}\u0000${c.family}`;
const round = (share: number) => Math.round(share * 10_000) / 10_000;
