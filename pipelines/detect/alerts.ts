// Alerts: one per detector, subject and overlapping event-time window. A hit whose window overlaps
// an open alert of the same detector on the same subject updates that alert (window widened,
// score and severity never lowered) and appends its evidence; a hit with nothing new (no movement,
// counterparty or fact beyond the last evidence recorded) changes nothing, and neither does one
// whose facts a closed (disposed) alert already holds. Evidence rows are never edited (rule 5).
// Windows that only touch count as overlapping: a hit on a single fact has from = to.
// Runs inside the caller's transaction, which holds the tenant's detection lock.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { severityRank, type AnyDetector, type Hit, type Severity, type SubjectRef } from './framework/detector.ts';
import type { OutgoingEvent } from './outgoing-events.ts';

export type Mode = 'live' | 'shadow';

export interface HitToRecord {
  tenantId: string;
  mode: Mode;
  rulesetVersion: number;
  detector: AnyDetector;
  subject: SubjectRef;
  partyId: string | null;
  hit: Hit;
  explanation: string;
  // The event time the subject was evaluated at.
  eventAt: Date;
}

export interface OpenedAlert {
  alertId: string;
  tenantId: string;
  subject: SubjectRef;
  partyId: string | null;
  severity: Severity;
  eventAt: Date;
  counterparties: string[];
}

// A live alert whose severity rose with new evidence: its episode may have to follow.
export interface RaisedAlert {
  alertId: string;
  tenantId: string;
  episodeId: string;
  severity: Severity;
}

export interface RecordedHits {
  opened: OpenedAlert[];
  raised: RaisedAlert[];
  // Alerts that gained evidence.
  updated: number;
  events: OutgoingEvent[];
}

interface OpenAlertRow {
  alert_id: string;
  episode_id: string | null;
  severity: Severity;
  status: 'open' | 'closed';
  unchanged: boolean;
  last_seq: number;
}

// The facts a hit's evidence names: a later evaluation citing the same ones (say, with a window
// ending later) adds nothing.
const factsOf = (hit: Hit): string =>
  JSON.stringify({ movements: hit.evidence.movements, counterparties: hit.evidence.counterparties, ...(hit.evidence.facts ? { facts: hit.evidence.facts } : {}) });

// The alert a hit would update, found for every hit at once: the latest alert of the hit's
// detector on its subject whose window overlaps the hit's, open ones first, with whether its
// latest evidence already holds the hit's facts.
const OPEN_ALERT_SQL = `
  SELECT h.i, a.alert_id, a.episode_id, a.severity, a.status,
         coalesce((SELECT e.evidence @> h.facts FROM alert_evidence e
                    WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id ORDER BY e.seq DESC LIMIT 1), false) AS unchanged,
         (SELECT max(e.seq) FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id) AS last_seq
    FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::jsonb[], $10::int[])
           AS h(i, mode, detector_id, subject_kind, subject_id, window_from, window_to, facts, ruleset_version)
   CROSS JOIN LATERAL (
     SELECT a.* FROM alerts a
      WHERE a.tenant_id = $1 AND a.mode = h.mode AND a.detector_id = h.detector_id AND a.subject_kind = h.subject_kind AND a.subject_id = h.subject_id
        AND a.window_from <= h.window_to AND a.window_to >= h.window_from
        -- A ruleset in shadow is compared as itself: it never extends another version's alerts.
        AND (a.mode = 'live' OR a.ruleset_version = h.ruleset_version)
      ORDER BY (a.status = 'open') DESC, a.window_to DESC
      LIMIT 1
   ) a`;

async function findOpenAlerts(db: PoolClient, tenantId: string, hits: Array<{ index: number; entry: HitToRecord }>): Promise<Map<number, OpenAlertRow>> {
  const found = new Map<number, OpenAlertRow>();
  if (hits.length === 0) return found;
  const { rows } = await db.query<OpenAlertRow & { i: number }>({
    name: 'alerts-find-open',
    text: OPEN_ALERT_SQL,
    values: [
      tenantId,
      hits.map((h) => h.index),
      hits.map((h) => h.entry.mode),
      hits.map((h) => h.entry.detector.id),
      hits.map((h) => h.entry.subject.kind),
      hits.map((h) => h.entry.subject.id),
      hits.map((h) => new Date(h.entry.hit.evidence.window.from)),
      hits.map((h) => new Date(h.entry.hit.evidence.window.to)),
      hits.map((h) => factsOf(h.entry.hit)),
      hits.map((h) => h.entry.rulesetVersion),
    ],
  });
  for (const row of rows) found.set(row.i, row);
  return found;
}

// hits: of one tenant, in the order they are to be recorded.
export async function recordHits(db: PoolClient, hits: HitToRecord[], now: Date): Promise<RecordedHits> {
  const result: RecordedHits = { opened: [], raised: [], updated: 0, events: [] };
  // The alerts every hit would update, read in one statement. A later hit of the same detector on
  // the same subject may find an alert an earlier one of this call opened or widened: it is
  // looked up again, after the earlier one is written.
  const keyOf = (entry: HitToRecord) => `${entry.mode}\u0000${entry.detector.id}\u0000${entry.subject.kind}\u0000${entry.subject.id}`;
  const firsts = new Map<string, number>();
  hits.forEach((entry, index) => {
    if (!firsts.has(keyOf(entry))) firsts.set(keyOf(entry), index);
  });
  const tenantId = hits[0]?.tenantId ?? '';
  if (hits.some((entry) => entry.tenantId !== tenantId)) throw new Error('recordHits: hits of several tenants');
  const prefound = await findOpenAlerts(db, tenantId, [...firsts.values()].map((index) => ({ index, entry: hits[index]! })));
  for (const [index, entry] of hits.entries()) {
    const { hit } = entry;
    const from = new Date(hit.evidence.window.from);
    const to = new Date(hit.evidence.window.to);
    const evidence = JSON.stringify(hit.evidence);
    const found = firsts.get(keyOf(entry)) === index ? prefound.get(index) : (await findOpenAlerts(db, tenantId, [{ index, entry }])).get(index);
    // Facts already judged (an open alert holds them, or an analyst disposed of the alert that
    // did) raise nothing new unless they are now judged more severe on an open alert.
    if (found?.unchanged && (found.status === 'closed' || severityRank(hit.severity) <= severityRank(found.severity))) continue;
    const open = found?.status === 'open' ? found : undefined;
    if (open) {
      const severity = severityRank(hit.severity) > severityRank(open.severity) ? hit.severity : open.severity;
      await db.query({
        name: 'alerts-extend',
        text: `WITH extended AS (
                 UPDATE alerts SET window_from = least(window_from, $3), window_to = greatest(window_to, $4), score = greatest(score, $5),
                                   severity = $6, summary = $7, explanation = $8, hits = hits + 1, updated_at = $9,
                                   detector_version = $10, ruleset_version = $11
                  WHERE tenant_id = $1 AND alert_id = $2
                 RETURNING tenant_id, alert_id
               )
               ${EVIDENCE_INSERT('extended')}`,
        values: [entry.tenantId, open.alert_id, from, to, hit.score, severity, hit.summary, entry.explanation, now, entry.detector.version, entry.rulesetVersion, ...evidenceValues(entry, open.last_seq + 1, evidence, now)],
      });
      result.updated += 1;
      if (severity !== open.severity && open.episode_id) {
        result.raised.push({ alertId: open.alert_id, tenantId: entry.tenantId, episodeId: open.episode_id, severity });
      }
      continue;
    }
    const alertId = uuidv7(now.getTime());
    await db.query({
      name: 'alerts-open',
      text: `WITH opened AS (
               INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id,
                                   party_id, window_from, window_to, score, severity, status, summary, explanation, hits, created_at, updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'open', $15, $16, 1, $17, $17)
               RETURNING tenant_id, alert_id
             )
             ${EVIDENCE_INSERT('opened', 18)}`,
      values: [
        entry.tenantId, alertId, entry.mode, entry.rulesetVersion, entry.detector.id, entry.detector.version, entry.detector.typology,
        entry.subject.kind, entry.subject.id, entry.partyId, from, to, hit.score, hit.severity, hit.summary, entry.explanation, now,
        ...evidenceValues(entry, 1, evidence, now),
      ],
    });
    // Shadow alerts are recorded to be compared, never published nor grouped into episodes.
    if (entry.mode === 'shadow') continue;
    result.opened.push({
      alertId,
      tenantId: entry.tenantId,
      subject: entry.subject,
      partyId: entry.partyId,
      severity: hit.severity,
      eventAt: entry.eventAt,
      counterparties: hit.evidence.counterparties,
    });
    result.events.push({
      tenantId: entry.tenantId,
      type: 'alert.opened',
      data: {
        alert_id: `${ID_PREFIXES.alert}${alertId}`,
        detector: entry.detector.id,
        typology: entry.detector.typology,
        severity: hit.severity,
        score: hit.score,
        subject: { kind: entry.subject.kind, external_id: entry.subject.id },
        window: hit.evidence.window,
        summary: hit.summary,
      },
    });
  }
  return result;
}

// The evidence row of the alert the CTE `source` wrote, in the same statement; its values
// (evidenceValues) are the statement's parameters from `first` on.
const EVIDENCE_INSERT = (source: string, first = 12): string =>
  `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
   SELECT tenant_id, alert_id, $${first}, $${first + 1}, $${first + 2}, $${first + 3}, $${first + 4}, $${first + 5}::jsonb FROM ${source}`;

const evidenceValues = (entry: HitToRecord, seq: number, evidence: string, now: Date) => [seq, now, entry.eventAt, entry.hit.score, entry.hit.severity, evidence];
