// Compliance views of alerts, episodes and case history (restricted AML content, scope compliance),
// and the single-record views composed from the reads of store.ts, shared by the API, the console
// and `svc cases show`.
import type { z } from 'zod';
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { alertDetailSchema, alertSchema, episodeDetailSchema, episodeSchema } from '../../schemas/responses.ts';
import { alertEvidence, caseActions, findEpisode, findLiveAlert, liveAlertsOfEpisode, type AlertRow, type AlertSummaryRow, type EpisodeRow } from './store.ts';

// Re-exported for pipelines/detect/alerts.test.ts, which reads alerts as the API does.

type Queryable = Pick<Pool, 'query'>;
export type AlertView = z.infer<typeof alertSchema>;
export type AlertDetail = z.infer<typeof alertDetailSchema>;
export type EpisodeView = z.infer<typeof episodeSchema>;
export type EpisodeDetail = z.infer<typeof episodeDetailSchema>;

export function alertSummaryView(row: AlertSummaryRow) {
  return {
    alert_id: ID_PREFIXES.alert + row.alert_id,
    status: row.status,
    detector: row.detector_id,
    typology: row.typology,
    subject: { kind: row.subject_kind, external_id: row.subject_id },
    severity: row.severity,
    score: row.score,
    window: { from: row.window_from.toISOString(), to: row.window_to.toISOString() },
    episode_id: row.episode_id === null ? null : ID_PREFIXES.episode + row.episode_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function alertView(row: AlertRow): AlertView {
  return {
    ...alertSummaryView(row),
    detector_version: row.detector_version,
    ruleset_version: row.ruleset_version,
    party_id: row.party_id,
    summary: row.summary,
    explanation: row.explanation,
    hits: row.hits,
    evidence: publicEvidence(row.evidence ?? {}),
  };
}

// Evidence as the API shows it, with snake_case member names as every field of the API has.
// Until 2026-11-29 some detectors wrote their facts' names in camelCase (listingTruncated);
// evidence is append-only, so rows stored then are shown under the names written now.
export function publicEvidence(evidence: Record<string, unknown>): Record<string, unknown> {
  const facts = evidence.facts;
  if (!facts || typeof facts !== 'object' || Array.isArray(facts)) return evidence;
  return { ...evidence, facts: Object.fromEntries(Object.entries(facts).map(([name, value]) => [name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value])) };
}

// One live alert with every evidence entry, oldest first; undefined when the tenant has none with this id.
export async function loadAlertDetail(db: Queryable, tenantId: string, alertId: string): Promise<AlertDetail | undefined> {
  const alert = await findLiveAlert(db, tenantId, alertId);
  if (!alert) return undefined;
  const history = await alertEvidence(db, tenantId, alertId);
  return {
    ...alertView(alert),
    evidence_history: history.map((e) => ({
      seq: e.seq,
      recorded_at: e.recorded_at.toISOString(),
      event_at: e.event_at.toISOString(),
      score: e.score,
      severity: e.severity,
      evidence: publicEvidence(e.evidence),
    })),
  };
}

export function episodeView(row: EpisodeRow): EpisodeView {
  return {
    episode_id: ID_PREFIXES.episode + row.episode_id,
    status: row.status,
    severity: row.severity,
    case_status: row.case_status,
    disposition: row.disposition,
    first_alert_at: row.first_alert_at.toISOString(),
    last_alert_at: row.last_alert_at.toISOString(),
    alert_count: row.alert_count,
    members: row.members,
    related: row.related,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

// One episode with its live alerts (newest first) and its case history (oldest first); undefined
// when the tenant has no episode with this id.
export async function loadEpisodeDetail(db: Queryable, tenantId: string, episodeId: string): Promise<EpisodeDetail | undefined> {
  const episode = await findEpisode(db, tenantId, episodeId);
  if (!episode) return undefined;
  const alerts = await liveAlertsOfEpisode(db, tenantId, episodeId);
  const history = await caseActions(db, tenantId, episodeId);
  return {
    ...episodeView(episode),
    alerts: alerts.map(alertView),
    case_history: history.map((c) => ({
      seq: c.seq,
      at: c.at.toISOString(),
      actor: c.actor,
      case_status: c.case_status,
      disposition: c.disposition,
      note: c.note,
    })),
  };
}
