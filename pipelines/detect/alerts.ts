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

export async function recordHits(db: PoolClient, hits: HitToRecord[], now: Date): Promise<RecordedHits> {
  const result: RecordedHits = { opened: [], raised: [], updated: 0, events: [] };
  for (const entry of hits) {
    const { hit } = entry;
    const from = new Date(hit.evidence.window.from);
    const to = new Date(hit.evidence.window.to);
    const evidence = JSON.stringify(hit.evidence);
    // What makes evidence new: a movement, counterparty or fact not recorded before. A later
    // evaluation citing the same facts (say, with a window ending later) adds nothing.
    const facts = JSON.stringify({ movements: hit.evidence.movements, counterparties: hit.evidence.counterparties, ...(hit.evidence.facts ? { facts: hit.evidence.facts } : {}) });
    const { rows } = await db.query<OpenAlertRow>({
      name: 'alerts-find-open',
      text: `SELECT a.alert_id, a.episode_id, a.severity, a.status,
                    coalesce((SELECT e.evidence @> $8::jsonb FROM alert_evidence e
                               WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id ORDER BY e.seq DESC LIMIT 1), false) AS unchanged,
                    (SELECT max(e.seq) FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id) AS last_seq
               FROM alerts a
              WHERE a.tenant_id = $1 AND a.mode = $2 AND a.detector_id = $3 AND a.subject_kind = $4 AND a.subject_id = $5
                AND a.window_from <= $7 AND a.window_to >= $6
                -- A ruleset in shadow is compared as itself: it never extends another version's alerts.
                AND (a.mode = 'live' OR a.ruleset_version = $9)
              ORDER BY (a.status = 'open') DESC, a.window_to DESC
              LIMIT 1`,
      values: [entry.tenantId, entry.mode, entry.detector.id, entry.subject.kind, entry.subject.id, from, to, facts, entry.rulesetVersion],
    });
    const found = rows[0];
    // Facts already judged (an open alert holds them, or an analyst disposed of the alert that
    // did) raise nothing new unless they are now judged more severe on an open alert.
    if (found?.unchanged && (found.status === 'closed' || severityRank(hit.severity) <= severityRank(found.severity))) continue;
    const open = found?.status === 'open' ? found : undefined;
    if (open) {
      const severity = severityRank(hit.severity) > severityRank(open.severity) ? hit.severity : open.severity;
      await db.query({
        name: 'alerts-extend',
        text: `UPDATE alerts SET window_from = least(window_from, $3), window_to = greatest(window_to, $4), score = greatest(score, $5),
                                 severity = $6, summary = $7, explanation = $8, hits = hits + 1, updated_at = $9,
                                 detector_version = $10, ruleset_version = $11
                WHERE tenant_id = $1 AND alert_id = $2`,
        values: [entry.tenantId, open.alert_id, from, to, hit.score, severity, hit.summary, entry.explanation, now, entry.detector.version, entry.rulesetVersion],
      });
      await appendEvidence(db, entry, open.alert_id, open.last_seq + 1, evidence, now);
      result.updated += 1;
      if (severity !== open.severity && open.episode_id) {
        result.raised.push({ alertId: open.alert_id, tenantId: entry.tenantId, episodeId: open.episode_id, severity });
      }
      continue;
    }
    const alertId = uuidv7(now.getTime());
    await db.query({
      name: 'alerts-open',
      text: `INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id,
                                 party_id, window_from, window_to, score, severity, status, summary, explanation, hits, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'open', $15, $16, 1, $17, $17)`,
      values: [
        entry.tenantId, alertId, entry.mode, entry.rulesetVersion, entry.detector.id, entry.detector.version, entry.detector.typology,
        entry.subject.kind, entry.subject.id, entry.partyId, from, to, hit.score, hit.severity, hit.summary, entry.explanation, now,
      ],
    });
    await appendEvidence(db, entry, alertId, 1, evidence, now);
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

async function appendEvidence(db: PoolClient, entry: HitToRecord, alertId: string, seq: number, evidence: string, now: Date): Promise<void> {
  await db.query({
    name: 'alerts-evidence',
    text: `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
    values: [entry.tenantId, alertId, seq, now, entry.eventAt, entry.hit.score, entry.hit.severity, evidence],
  });
}
