// Posture: one band per party. The band is the highest severity among the party's unresolved
// episodes (the party, or one of its accounts, is a subject of the episode); a party detection
// has looked at with nothing unresolved is `low`, unless most detectors could not judge it on its
// last evaluation (non-results), in which case it is `incomplete`: we cannot vouch for low.
// A party detection has never looked at is `unknown` (no row). A change of band enqueues
// risk_state.changed; a rise to high or critical also a sanitised recommendation.issued.
// Bands are recomputed for the parties whose inputs changed (episodes, or judged/unjudged on
// their latest evaluation), not on every evaluation: the posture's computed_at is the later of
// the band's row and the party's latest live evaluation, which confirmed it.
// Callers hold the tenant's detection lock (detection-lock.ts), so two writers never race on a band.
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { SEVERITIES, severityRank, type Severity } from './framework/detector.ts';
import type { OutgoingEvent } from '../webhooks/outgoing-events.ts';

type Band = Severity | 'incomplete';

// What the customer is advised to do at each band; the customer decides and enforces.
const RECOMMENDATIONS = {
  high: 'enhanced_review',
  critical: 'restrict_pending_review',
} as const satisfies Partial<Record<Band, string>>;
const recommends = (band: Band): band is keyof typeof RECOMMENDATIONS => Object.hasOwn(RECOMMENDATIONS, band);

interface PostureRow {
  party_id: string;
  previous: Band | null;
  worst: Severity | null;
  episode_id: string | null;
  incomplete: boolean;
}

export async function recomputePostures(db: PoolClient, tenantId: string, parties: Iterable<string>, now: Date): Promise<OutgoingEvent[]> {
  const ids = [...new Set(parties)].sort();
  if (ids.length === 0) return [];
  const { rows } = await db.query<PostureRow>({
    name: 'posture-inputs',
    // Every row is looked up by its key, each in a subquery that LIMIT keeps from being turned
    // into a join: as joins, planned on statistics behind the tables' growth, they hashed or
    // merged the tenant's every posture and evaluation (twice the time for 1,200 parties among
    // 20,000; a tenant's millions at scale).
    text: `SELECT p.party_id, pp.band AS previous, worst.severity AS worst, worst.episode_id, coalesce(s.incomplete, false) AS incomplete
             FROM unnest($2::text[]) AS p(party_id)
             LEFT JOIN LATERAL (SELECT band FROM party_postures WHERE tenant_id = $1 AND party_id = p.party_id LIMIT 1) pp ON true
             LEFT JOIN LATERAL (
               SELECT incomplete FROM subject_evaluations
                WHERE tenant_id = $1 AND subject_kind = 'party' AND subject_id = p.party_id AND mode = 'live'
                LIMIT 1
             ) s ON true
             LEFT JOIN LATERAL (
               SELECT e.severity, e.episode_id FROM episode_members m
                CROSS JOIN LATERAL (
                  SELECT severity, episode_id, status, updated_at FROM episodes WHERE tenant_id = m.tenant_id AND episode_id = m.episode_id LIMIT 1
                ) e
                WHERE m.tenant_id = $1 AND m.subject_kind = 'party' AND m.subject_id = p.party_id AND m.role = 'subject' AND e.status <> 'resolved'
                ORDER BY array_position($3::text[], e.severity) DESC, e.updated_at DESC
                LIMIT 1
             ) worst ON true
            ORDER BY p.party_id`,
    values: [tenantId, ids, SEVERITIES],
  });
  const events: OutgoingEvent[] = [];
  const bands: Array<{ party: string; band: Band }> = [];
  for (const row of rows) {
    const band: Band = row.worst ?? (row.incomplete ? 'incomplete' : 'low');
    bands.push({ party: row.party_id, band });
    if (band === row.previous) continue;
    events.push({
      tenantId,
      type: 'risk_state.changed',
      data: {
        subject: { kind: 'party', external_id: row.party_id },
        band,
        previous_band: row.previous ?? 'unknown',
        computed_at: now.toISOString(),
        ...(row.episode_id ? { episode_id: `${ID_PREFIXES.episode}${row.episode_id}` } : {}),
      },
    });
    const rose = row.previous === null || row.previous === 'incomplete' || severityRank(band as Severity) > severityRank(row.previous as Severity);
    if (recommends(band) && rose && row.worst) {
      // Operational channel: subject, band, severity, recommendation code and episode only.
      events.push({
        tenantId,
        type: 'recommendation.issued',
        data: {
          subject: { kind: 'party', external_id: row.party_id },
          band,
          severity: row.worst,
          recommendation: RECOMMENDATIONS[band],
          episode_id: `${ID_PREFIXES.episode}${row.episode_id}`,
        },
      });
    }
  }
  await db.query({
    name: 'posture-write',
    text: `INSERT INTO party_postures (tenant_id, party_id, band, computed_at, evaluated_at)
           SELECT $1, p, b, $4, $4 FROM unnest($2::text[], $3::text[]) AS u(p, b)
           ON CONFLICT (tenant_id, party_id) DO UPDATE SET band = EXCLUDED.band, computed_at = EXCLUDED.computed_at, evaluated_at = EXCLUDED.evaluated_at`,
    values: [tenantId, bands.map((b) => b.party), bands.map((b) => b.band), now],
  });
  return events;
}
