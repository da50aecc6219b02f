// Alerts: one per detector, subject and overlapping event-time window. A hit whose window overlaps
// an open alert of the same detector on the same subject updates that alert (window widened) and
// appends its evidence. The alert's headline (score, severity, summary, explanation, versions) is
// that of its strongest hit (highest severity, then highest score; on a tie the later in event
// time, then the later recorded), so score and severity are never lowered, and a hit recorded
// later but judged at an earlier instant (a late fact) adds its facts without lending the alert
// an older picture's words, however its strength compares. The alert names its headline's
// evidence row (headline_seq), which readers show. A hit with nothing new (no movement,
// counterparty or fact beyond evidence recorded before) changes nothing, and neither does one
// whose facts a closed (disposed) alert already holds. Evidence rows are never edited (rule 5).
// Windows that only touch count as overlapping: a hit on a single fact has from = to.
// Runs inside the caller's transaction, which holds the tenant's detection lock.
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { HEADLINE_EVIDENCE_ORDER } from '../../services/cases/store.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import { severityRank, type AnyDetector, type Hit, type Severity, type SubjectRef } from '../../services/detection/framework/detector.ts';
import type { OutgoingEvent } from '../../services/webhooks/outgoing-events.ts';

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

// A live alert in an episode that a later hit extended, at the hit's event time, with the
// counterparties the hit's evidence names.
export interface ExtendedAlert {
  tenantId: string;
  episodeId: string;
  eventAt: Date;
  counterparties: string[];
  // Whether the hit took the alert's headline: the episode's amount at stake may have changed.
  headline: boolean;
}

export interface RecordedHits {
  opened: OpenedAlert[];
  raised: RaisedAlert[];
  extended: ExtendedAlert[];
  // Alerts that gained evidence.
  updated: number;
  events: OutgoingEvent[];
}

interface OpenAlertRow {
  alert_id: string;
  episode_id: string | null;
  severity: Severity;
  score: number;
  status: 'open' | 'closed';
  unchanged: boolean;
  last_seq: number;
  // The headline hit's evidence row and the instant it was judged at (null: no evidence row).
  headline_seq: number | null;
  headline_at: Date | null;
}

// The facts a hit's evidence names: a later evaluation citing the same ones (say, with a window
// ending later) adds nothing.
const factsOf = (hit: Hit): string =>
  JSON.stringify({ movements: hit.evidence.movements, counterparties: hit.evidence.counterparties, ...(hit.evidence.facts ? { facts: hit.evidence.facts } : {}) });

// The alert a hit would update, found for every hit at once: the latest alert of the hit's
// detector on its subject whose window overlaps the hit's, open ones first, with whether any of
// its evidence already holds the hit's facts (not only the latest: a late fact judged at its own,
// earlier instant may have been recorded since, and a redelivered hit must still add nothing).
const OPEN_ALERT_SQL = `
  SELECT h.i, a.alert_id, a.episode_id, a.severity, a.score, a.status,
         EXISTS (SELECT 1 FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id AND e.evidence @> h.facts) AS unchanged,
         (SELECT max(e.seq) FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id) AS last_seq,
         hd.seq AS headline_seq, hd.event_at AS headline_at
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
   ) a
   LEFT JOIN LATERAL (
     -- The row the alert names is read by its key; only an alert written before names none.
     SELECT e.seq, e.event_at FROM alert_evidence e WHERE e.tenant_id = a.tenant_id AND e.alert_id = a.alert_id
        AND (a.headline_seq IS NULL OR e.seq = a.headline_seq)
      ORDER BY ${HEADLINE_EVIDENCE_ORDER('e', 'a')} LIMIT 1
   ) hd ON true`;

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

// An alert a hit widens (with its evidence row), or one it opens: written together (AlertWrites).
interface Extension {
  entry: HitToRecord;
  alertId: string;
  // Whether the hit becomes the alert's headline.
  headline: boolean;
  seq: number;
  // The headline's evidence row when the hit does not take it: named on the alert, which an alert
  // written before migration 0057 did not yet do.
  keptSeq: number | null;
}

// Whether a hit takes the alert's headline: it is stronger, or as strong and judged at the same or
// a later instant. A tie judged earlier (a late fact's own instant) describes an older picture of
// the subject than the headline does, and taking it would make the alert's words depend on the
// order facts arrived in (the detection issue, item 4).
const outranks = (hit: Hit, eventAt: Date, alert: { severity: Severity; score: number; headline_at: Date | null }): boolean => {
  const bySeverity = severityRank(hit.severity) - severityRank(alert.severity);
  if (bySeverity !== 0) return bySeverity > 0;
  if (hit.score !== alert.score) return hit.score > alert.score;
  return alert.headline_at === null || eventAt.getTime() >= alert.headline_at.getTime();
};

interface Opening {
  entry: HitToRecord;
  alertId: string;
}

// hits: of one tenant, in the order they are to be recorded.
export async function recordHits(db: PoolClient, hits: HitToRecord[], now: Date): Promise<RecordedHits> {
  const result: RecordedHits = { opened: [], raised: [], extended: [], updated: 0, events: [] };
  // The alerts every hit would update, read in one statement. A later hit of the same detector on
  // the same subject may find an alert an earlier one of this call opened or widened: it is
  // looked up again, after what was decided before it is written.
  const keyOf = (entry: HitToRecord) => `${entry.mode}\u0000${entry.detector.id}\u0000${entry.subject.kind}\u0000${entry.subject.id}`;
  const firsts = new Map<string, number>();
  hits.forEach((entry, index) => {
    if (!firsts.has(keyOf(entry))) firsts.set(keyOf(entry), index);
  });
  const tenantId = hits[0]?.tenantId ?? '';
  if (hits.some((entry) => entry.tenantId !== tenantId)) throw new Error('recordHits: hits of several tenants');
  const prefound = await findOpenAlerts(db, tenantId, [...firsts.values()].map((index) => ({ index, entry: hits[index]! })));
  // Hits on different alerts do not meet: their writes wait and go in two statements (one for
  // the alerts widened, one for those opened), not one per hit in the commit's critical path.
  const writes = new AlertWrites(tenantId, now);
  // Alerts this call opened: a later hit of the call that outranks the opening one lends them its
  // headline, and the episode they are about to be assigned must see it.
  const openedHere = new Map<string, { opened: OpenedAlert; event: OutgoingEvent }>();
  for (const [index, entry] of hits.entries()) {
    const { hit } = entry;
    let found: OpenAlertRow | undefined;
    if (firsts.get(keyOf(entry)) === index) {
      found = prefound.get(index);
    } else {
      await writes.flush(db);
      found = (await findOpenAlerts(db, tenantId, [{ index, entry }])).get(index);
    }
    // Facts already judged (an open alert holds them, or an analyst disposed of the alert that
    // did) raise nothing new unless they are now judged more severe on an open alert.
    if (found?.unchanged && (found.status === 'closed' || severityRank(hit.severity) <= severityRank(found.severity))) continue;
    const open = found?.status === 'open' ? found : undefined;
    if (open) {
      const headline = outranks(hit, entry.eventAt, open);
      const severity = headline ? hit.severity : open.severity;
      writes.extensions.push({ entry, alertId: open.alert_id, headline, seq: open.last_seq + 1, keptSeq: open.headline_seq });
      result.updated += 1;
      const fresh = openedHere.get(open.alert_id);
      if (fresh) strengthen(fresh, entry, headline);
      if (open.episode_id && entry.mode === 'live') {
        result.extended.push({ tenantId: entry.tenantId, episodeId: open.episode_id, eventAt: entry.eventAt, counterparties: hit.evidence.counterparties, headline });
      }
      if (severity !== open.severity && open.episode_id) {
        result.raised.push({ alertId: open.alert_id, tenantId: entry.tenantId, episodeId: open.episode_id, severity });
      }
      continue;
    }
    const alertId = uuidv7(now.getTime());
    writes.openings.push({ entry, alertId });
    // Shadow alerts are recorded to be compared, never published nor grouped into episodes.
    if (entry.mode === 'shadow') continue;
    const opened: OpenedAlert = {
      alertId,
      tenantId: entry.tenantId,
      subject: entry.subject,
      partyId: entry.partyId,
      severity: hit.severity,
      eventAt: entry.eventAt,
      counterparties: [...hit.evidence.counterparties],
    };
    const event: OutgoingEvent = {
      tenantId: entry.tenantId,
      type: 'alert.opened',
      data: {
        alert_id: `${ID_PREFIXES.alert}${alertId}`,
        detector: entry.detector.id,
        typology: entry.detector.typology,
        severity: hit.severity,
        score: hit.score,
        subject: { kind: entry.subject.kind, external_id: entry.subject.id },
        window: { ...hit.evidence.window },
        summary: hit.summary,
      },
    };
    openedHere.set(alertId, { opened, event });
    result.opened.push(opened);
    result.events.push(event);
  }
  await writes.flush(db);
  return result;
}

// A later hit of the same call on an alert the call opened: the alert is announced and grouped
// as it stands when the call commits (its headline, its whole window, every counterparty), not as
// its first hit left it.
function strengthen(fresh: { opened: OpenedAlert; event: OutgoingEvent }, entry: HitToRecord, headline: boolean): void {
  const { hit } = entry;
  const { opened, event } = fresh;
  for (const counterparty of hit.evidence.counterparties) if (!opened.counterparties.includes(counterparty)) opened.counterparties.push(counterparty);
  const data = event.data as { severity: Severity; score: number; summary: string; window: { from: string; to: string } };
  if (Date.parse(hit.evidence.window.from) < Date.parse(data.window.from)) data.window.from = hit.evidence.window.from;
  if (Date.parse(hit.evidence.window.to) > Date.parse(data.window.to)) data.window.to = hit.evidence.window.to;
  if (entry.eventAt > opened.eventAt) opened.eventAt = entry.eventAt;
  if (!headline) return;
  opened.severity = hit.severity;
  data.severity = hit.severity;
  data.score = hit.score;
  data.summary = hit.summary;
}

// The evidence row each alert of the statement gets: the hit's own score, severity and evidence,
// from the rows `h` (one per alert) of the alerts the CTE `written` returned.
const EVIDENCE_INSERT = (written: string): string =>
  `INSERT INTO alert_evidence (tenant_id, alert_id, seq, recorded_at, event_at, score, severity, evidence)
   SELECT w.tenant_id, w.alert_id, h.seq, $2, h.event_at, h.hit_score, h.hit_severity, h.evidence
     FROM ${written} w JOIN h ON h.alert_id = w.alert_id`;

// What a hit sets on the alert it widens or opens, and its evidence row, as the statements'
// JSON rows carry them (a widened alert takes the headline fields only from a hit that outranks it).
const hitFields = (entry: HitToRecord, seq: number) => ({
  window_from: entry.hit.evidence.window.from,
  window_to: entry.hit.evidence.window.to,
  score: entry.hit.score,
  summary: entry.hit.summary,
  explanation: entry.explanation,
  detector_version: entry.detector.version,
  ruleset_version: entry.rulesetVersion,
  seq,
  event_at: entry.eventAt.toISOString(),
  hit_score: entry.hit.score,
  hit_severity: entry.hit.severity,
  evidence: entry.hit.evidence,
});

// The alert writes decided so far, each alert at most once (a second hit on one alert flushes
// them first). Rows go as one JSON document per statement.
class AlertWrites {
  extensions: Extension[] = [];
  openings: Opening[] = [];

  constructor(
    private readonly tenantId: string,
    private readonly now: Date,
  ) {}

  async flush(db: PoolClient): Promise<void> {
    const extensions = this.extensions.splice(0);
    const openings = this.openings.splice(0);
    if (extensions.length > 0) {
      await db.query({
        name: 'alerts-extend',
        // The alerts are found by key (= ANY), then matched to their rows: a join of the table
        // with rows the planner cannot count could otherwise scan the tenant's alerts.
        text: `WITH h AS MATERIALIZED (
                 SELECT * FROM json_to_recordset($3::json) AS h(alert_id uuid, headline boolean, kept_seq int, window_from timestamptz, window_to timestamptz, score float8,
                   severity text, summary text, explanation text, detector_version int, ruleset_version int,
                   seq int, event_at timestamptz, hit_score float8, hit_severity text, evidence jsonb)
               ),
               extended AS (
                 UPDATE alerts a SET window_from = least(a.window_from, h.window_from), window_to = greatest(a.window_to, h.window_to),
                                     score = CASE WHEN h.headline THEN h.score ELSE a.score END,
                                     severity = CASE WHEN h.headline THEN h.severity ELSE a.severity END,
                                     summary = CASE WHEN h.headline THEN h.summary ELSE a.summary END,
                                     explanation = CASE WHEN h.headline THEN h.explanation ELSE a.explanation END,
                                     detector_version = CASE WHEN h.headline THEN h.detector_version ELSE a.detector_version END,
                                     ruleset_version = CASE WHEN h.headline THEN h.ruleset_version ELSE a.ruleset_version END,
                                     headline_seq = CASE WHEN h.headline THEN h.seq ELSE coalesce(h.kept_seq, a.headline_seq) END,
                                     hits = a.hits + 1, updated_at = $2
                   FROM h
                  WHERE a.tenant_id = $1 AND a.alert_id = ANY($4::uuid[]) AND a.alert_id = h.alert_id
                 RETURNING a.tenant_id, a.alert_id
               )
               ${EVIDENCE_INSERT('extended')}`,
        values: [
          this.tenantId,
          this.now,
          JSON.stringify(
            extensions.map(({ entry, alertId, headline, seq, keptSeq }) => ({
              alert_id: alertId,
              headline,
              kept_seq: keptSeq,
              severity: entry.hit.severity,
              ...hitFields(entry, seq),
            })),
          ),
          extensions.map((e) => e.alertId),
        ],
      });
    }
    if (openings.length > 0) {
      await db.query({
        name: 'alerts-open',
        text: `WITH h AS MATERIALIZED (
                 SELECT * FROM json_to_recordset($3::json) AS h(alert_id uuid, mode text, ruleset_version int, detector_id text, detector_version int,
                   typology text, subject_kind text, subject_id text, party_id text, window_from timestamptz, window_to timestamptz,
                   score float8, severity text, summary text, explanation text,
                   seq int, event_at timestamptz, hit_score float8, hit_severity text, evidence jsonb)
               ),
               opened AS (
                 INSERT INTO alerts (tenant_id, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id,
                                     party_id, window_from, window_to, score, severity, status, summary, explanation, hits, headline_seq, created_at, updated_at)
                 SELECT $1, alert_id, mode, ruleset_version, detector_id, detector_version, typology, subject_kind, subject_id,
                        party_id, window_from, window_to, score, severity, 'open', summary, explanation, 1, seq, $2, $2
                   FROM h
                 RETURNING tenant_id, alert_id
               )
               ${EVIDENCE_INSERT('opened')}`,
        values: [
          this.tenantId,
          this.now,
          JSON.stringify(
            openings.map(({ entry, alertId }) => ({
              alert_id: alertId,
              mode: entry.mode,
              detector_id: entry.detector.id,
              typology: entry.detector.typology,
              subject_kind: entry.subject.kind,
              subject_id: entry.subject.id,
              party_id: entry.partyId,
              severity: entry.hit.severity,
              ...hitFields(entry, 1),
            })),
          ),
        ],
      });
    }
  }
}
