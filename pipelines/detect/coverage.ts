// Feed coverage: which families arrive for each tenant and how fresh they are. Every change record
// detection reads is an arrival of its family. A fact feed (movements, control events) that has
// been silent, in arrival time, for longer than its silence threshold is degraded: detection can
// no longer vouch for what it does not see, so postures report it. Entity feeds are naturally
// bursty and are tracked for freshness only. Degrading and recovering enqueue coverage.* events.
import type { PoolClient } from '../../platform/postgres/pool.ts';
import type { Family } from '../../schemas/families/index.ts';
import type { OutgoingEvent } from '../../services/webhooks/outgoing-events.ts';

export interface Arrival {
  tenantId: string;
  family: string;
  receivedAt: Date;
  occurredAt: Date;
}

// Minutes of silence after which a fact feed is degraded.
export interface SilenceThresholds {
  movement: number;
  control_event: number;
}

export const DEFAULT_SILENCE: SilenceThresholds = { movement: 60, control_event: 24 * 60 };

// A degraded feed recovers only on a fresh arrival, one received within its silence threshold:
// a record received long ago and judged late (detection catching up after an outage, a replayed
// dead letter) says nothing of the feed now, and recovering on it would degrade the feed again
// at the next sweep, announcing both each time.
export async function noteArrivals(db: PoolClient, arrivals: Arrival[], now: Date, silence: SilenceThresholds = DEFAULT_SILENCE): Promise<OutgoingEvent[]> {
  if (arrivals.length === 0) return [];
  const latest = new Map<string, Arrival>();
  for (const a of arrivals) {
    const key = `${a.tenantId}\u0000${a.family}`;
    const seen = latest.get(key);
    latest.set(key, {
      ...a,
      receivedAt: seen && seen.receivedAt > a.receivedAt ? seen.receivedAt : a.receivedAt,
      occurredAt: seen && seen.occurredAt > a.occurredAt ? seen.occurredAt : a.occurredAt,
    });
  }
  const rows = [...latest.values()].sort((x, y) => (x.tenantId + x.family < y.tenantId + y.family ? -1 : 1));
  const threshold = (family: string) => (Object.hasOwn(silence, family) ? silence[family as keyof SilenceThresholds] : undefined);
  const fresh = rows.filter((r) => {
    const minutes = threshold(r.family);
    return minutes === undefined || r.receivedAt.getTime() >= now.getTime() - minutes * 60_000;
  });
  // Recovered before the arrivals' times are written: the silence began at the time it had.
  const { rows: recovered } = await db.query<{ tenant_id: string; family: Family; silent_since: Date }>({
    name: 'coverage-recovered',
    text: `UPDATE feed_coverage SET state = 'active', state_changed_at = $3
            WHERE state = 'degraded' AND (tenant_id, family) IN (SELECT * FROM unnest($1::text[], $2::text[]))
           RETURNING tenant_id, family, last_received_at AS silent_since`,
    values: [fresh.map((r) => r.tenantId), fresh.map((r) => r.family), now],
  });
  await db.query({
    name: 'coverage-arrivals',
    text: `INSERT INTO feed_coverage AS f (tenant_id, family, last_received_at, last_occurred_at, state, state_changed_at)
           SELECT t, fam, r, o, 'active', $5 FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS u(t, fam, r, o)
           ON CONFLICT (tenant_id, family) DO UPDATE
             SET last_received_at = greatest(f.last_received_at, EXCLUDED.last_received_at),
                 last_occurred_at = greatest(f.last_occurred_at, EXCLUDED.last_occurred_at)`,
    values: [rows.map((r) => r.tenantId), rows.map((r) => r.family), rows.map((r) => r.receivedAt), rows.map((r) => r.occurredAt), now],
  });
  return recovered.map((row) => ({
    tenantId: row.tenant_id,
    type: 'coverage.recovered' as const,
    data: { reason: 'feed_silence' as const, family: row.family, silent_since: row.silent_since.toISOString(), recovered_at: now.toISOString() },
  }));
}

// Marks silent fact feeds degraded; returns their coverage.degraded events.
export async function sweepCoverage(db: PoolClient, now: Date, silence: SilenceThresholds = DEFAULT_SILENCE): Promise<OutgoingEvent[]> {
  const families = Object.keys(silence) as Array<keyof SilenceThresholds>;
  const { rows } = await db.query<{ tenant_id: string; family: keyof SilenceThresholds; last_received_at: Date }>({
    name: 'coverage-sweep',
    text: `UPDATE feed_coverage f SET state = 'degraded', state_changed_at = $3::timestamptz
             FROM unnest($1::text[], $2::double precision[]) AS s(family, minutes)
            WHERE f.family = s.family AND f.state = 'active' AND f.last_received_at < $3::timestamptz - s.minutes * interval '1 minute'
           RETURNING f.tenant_id, f.family, f.last_received_at`,
    values: [families, families.map((f) => silence[f]), now],
  });
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    type: 'coverage.degraded' as const,
    data: {
      reason: 'feed_silence' as const,
      family: row.family,
      last_received_at: row.last_received_at.toISOString(),
      degraded_at: now.toISOString(),
      silence_minutes: silence[row.family],
    },
  }));
}

// Fact families a tenant has sent at all (detectors that need them answer insufficient_data until then).
export async function familiesSeen(db: Pick<PoolClient, 'query'>, tenantIds: string[]): Promise<Map<string, Set<string>>> {
  const { rows } = await db.query<{ tenant_id: string; family: string }>({
    name: 'coverage-families-seen',
    text: 'SELECT tenant_id, family FROM feed_coverage WHERE tenant_id = ANY($1::text[])',
    values: [tenantIds],
  });
  const seen = new Map<string, Set<string>>(tenantIds.map((t) => [t, new Set()]));
  for (const row of rows) seen.get(row.tenant_id)?.add(row.family);
  return seen;
}
