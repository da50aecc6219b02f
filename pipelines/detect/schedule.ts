// Windows that close: detection also runs on a schedule, not only on new facts. Event time drives
// every window, so time passing is the tenant's event time moving on: its watermark is the
// instant of its latest live evaluation. A subject is due once the watermark is a day or more past
// its last evaluation (its daily window has rolled over since) while its last fact is still inside
// the longest window (90 days): past that, every window is empty and nothing more can change.
// A due subject is evaluated at the watermark with trigger 'schedule', with no change record: the
// detectors that declare that trigger run (data gone stale, windows judged once they closed) and
// the party's posture is recomputed with them. Oldest evaluations first, a bounded number per pass.
import type { Pool } from '../../platform/postgres/pool.ts';
import type { SubjectKind } from '../../services/detection/framework/detector.ts';
import type { SubjectWork } from '../../services/detection/subjects.ts';

const DAY_MS = 86_400_000;
// A subject's evaluation is due again after this much event time.
const SCHEDULE_STEP_MS = DAY_MS;
// ... for as long as its last fact is this recent (the longest window).
const SCHEDULE_HORIZON_MS = 90 * DAY_MS;

// Subjects of the given kinds due for a scheduled evaluation, at most `limit` per tenant. The kinds
// are those the runner keeps outcomes of (run.ts recordedKinds): a row of another kind (an
// account's, written before only those were kept) would never move on, and would be due at
// every sweep.
export async function dueForSchedule(pool: Pool, limit: number, kinds: ReadonlySet<SubjectKind>): Promise<SubjectWork[]> {
  const { rows } = await pool.query<{ tenant_id: string; subject_kind: 'account' | 'party'; subject_id: string; fact_at: Date; watermark: Date }>({
    name: 'detect-schedule-due',
    text: `SELECT t.tenant_id, d.subject_kind, d.subject_id, d.fact_at, w.watermark
             FROM tenants t
            CROSS JOIN LATERAL (SELECT max(event_at) AS watermark FROM subject_evaluations
                                 WHERE tenant_id = t.tenant_id AND mode = 'live') w
            CROSS JOIN LATERAL (
              SELECT e.subject_kind, e.subject_id, e.fact_at FROM subject_evaluations e
               WHERE e.tenant_id = t.tenant_id AND e.mode = 'live' AND e.subject_kind = ANY($4::text[])
                 AND e.event_at <= w.watermark - $1 * interval '1 millisecond'
                 -- event_at >= fact_at: the same bound keeps the index range to the horizon, so
                 -- subjects long dormant are never walked again.
                 AND e.event_at > w.watermark - $2 * interval '1 millisecond'
                 AND e.fact_at > w.watermark - $2 * interval '1 millisecond'
               ORDER BY e.event_at
               LIMIT $3
            ) d
            WHERE w.watermark IS NOT NULL`,
    values: [SCHEDULE_STEP_MS, SCHEDULE_HORIZON_MS, limit, [...kinds]],
  });
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    subject: { kind: row.subject_kind, id: row.subject_id },
    trigger: 'schedule',
    at: row.watermark,
    change: null,
    factAt: row.fact_at,
  }));
}
