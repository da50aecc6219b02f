// Episodes: alerts on one subject, and on subjects connected to it within k hops of the network,
// grouped within a time horizon (event time). A new alert joins the most recently active episode
// that is still open and has a member within reach; a resolved episode is reopened only by a new
// alert on one of its own subjects, and never one closed with a filed report; otherwise the alert
// starts an episode of its own. Episodes
// are never merged: two that meet later stay two (merging would rewrite what analysts have seen).
// Runs inside the caller's transaction, which holds the tenant's detection lock.
import type { GraphStore, NodeRef } from '../../platform/graph/port.ts';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import type { PoolClient } from '../../platform/postgres/pool.ts';
import type { ExtendedAlert, OpenedAlert, RaisedAlert } from './alerts.ts';
import { refreshCaseInbox } from '../../services/cases/inbox.ts';
import { severityRank, type Severity } from '../../services/detection/framework/detector.ts';
import type { OutgoingEvent } from '../../services/webhooks/outgoing-events.ts';
import type { CASE_STATUSES, DISPOSITIONS } from '../../schemas/responses.ts';

type CaseStatus = (typeof CASE_STATUSES)[number];
type Disposition = (typeof DISPOSITIONS)[number];

export interface EpisodePolicy {
  // Subjects within this many hops (any edge type) belong together.
  hops: number;
  horizonDays: number;
  // An episode escalates by itself when it reaches this severity or this many alerts.
  escalateAtSeverity: Severity;
  escalateAtAlerts: number;
}

export const DEFAULT_EPISODE_POLICY: EpisodePolicy = { hops: 2, horizonDays: 30, escalateAtSeverity: 'high', escalateAtAlerts: 5 };

const DAY_MS = 86_400_000;
const NEIGHBOURHOOD_CAP = 300;

interface EpisodeRow {
  episode_id: string;
  status: 'open' | 'escalated' | 'resolved' | 'reopened';
  severity: Severity;
  alert_count: number;
  is_member: boolean;
}

export interface AssignedEpisodes {
  events: OutgoingEvent[];
  // Parties whose posture may have changed.
  parties: Set<string>;
}

export async function assignEpisodes(
  db: PoolClient,
  graph: GraphStore,
  alerts: OpenedAlert[],
  now: Date,
  policy: EpisodePolicy = DEFAULT_EPISODE_POLICY,
): Promise<AssignedEpisodes> {
  const out: AssignedEpisodes = { events: [], parties: new Set() };
  const touched = new Map<string, string[]>();
  const sinceOf = (alert: OpenedAlert) => new Date(alert.eventAt.getTime() - policy.horizonDays * DAY_MS);
  const reached = await neighbourhoods(graph, alerts, sinceOf, policy.hops);
  for (const [index, alert] of alerts.entries()) {
    const since = sinceOf(alert);
    const until = new Date(alert.eventAt.getTime() + policy.horizonDays * DAY_MS);
    const reach = reached[index]!;
    // Within the horizon on both sides of the alert's event time (a late alert months before an
    // episode is not part of it); the most recently active unresolved episode first, then the
    // subject's own resolved ones, which it reopens.
    const { rows } = await db.query<EpisodeRow>({
      name: 'episodes-candidates',
      text: `SELECT e.episode_id, e.status, e.severity, e.alert_count,
                    bool_or(m.subject_kind = $5 AND m.subject_id = $6 AND m.role = 'subject') AS is_member
               FROM episode_members m
               JOIN episodes e ON e.tenant_id = m.tenant_id AND e.episode_id = m.episode_id
              WHERE m.tenant_id = $1 AND (m.subject_kind, m.subject_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))
                AND e.last_alert_at >= $4 AND e.first_alert_at <= $7
                -- A case closed with a filed report stays as filed (decision 0031): activity after
                -- it is a case of its own, not a reopening that would take the filing away.
                AND NOT (e.status = 'resolved' AND e.disposition = 'suspicious_activity_reported')
              GROUP BY e.episode_id, e.status, e.severity, e.alert_count, e.updated_at
              ORDER BY (e.status <> 'resolved') DESC, (e.status = 'resolved' AND bool_or(m.subject_kind = $5 AND m.subject_id = $6 AND m.role = 'subject')) DESC,
                       e.updated_at DESC
              LIMIT 1`,
      values: [alert.tenantId, reach.map((r) => r.kind), reach.map((r) => r.key), since, alert.subject.kind, alert.subject.id, until],
    });
    const active = rows.find((row) => row.status !== 'resolved');
    const reopenable = rows.find((row) => row.status === 'resolved' && row.is_member);
    const chosen = active ?? reopenable;
    let episodeId: string;
    let status: EpisodeRow['status'];
    let severity: Severity;
    let alertCount: number;
    let change: 'opened' | 'alert_added' | 'reopened';
    if (!chosen) {
      episodeId = uuidv7(now.getTime());
      status = 'open';
      severity = alert.severity;
      alertCount = 1;
      change = 'opened';
    } else {
      episodeId = chosen.episode_id;
      change = chosen.status === 'resolved' ? 'reopened' : 'alert_added';
      status = chosen.status === 'resolved' ? 'reopened' : chosen.status;
      severity = severityRank(alert.severity) > severityRank(chosen.severity) ? alert.severity : chosen.severity;
      alertCount = chosen.alert_count + 1;
    }
    const escalate = status !== 'escalated' && (severityRank(severity) >= severityRank(policy.escalateAtSeverity) || alertCount >= policy.escalateAtAlerts);
    if (escalate) status = 'escalated';
    if (!chosen) {
      // Opened escalated when its first alert is severe enough, as episode.escalated says.
      await db.query({
        name: 'episodes-open',
        text: `INSERT INTO episodes (tenant_id, episode_id, status, severity, first_alert_at, last_alert_at, alert_count, case_status, created_at, updated_at)
               VALUES ($1, $2, $6, $3, $4, $4, 1, 'open', $5, $5)`,
        values: [alert.tenantId, episodeId, severity, alert.eventAt, now, status],
      });
    } else {
      await db.query({
        name: 'episodes-add-alert',
        text: `UPDATE episodes SET status = $3, severity = $4, alert_count = $5, last_alert_at = greatest(last_alert_at, $6),
                                   first_alert_at = least(first_alert_at, $6), updated_at = $7,
                                   case_status = CASE WHEN $8 THEN 'open' ELSE case_status END,
                                   disposition = CASE WHEN $8 THEN NULL ELSE disposition END
                WHERE tenant_id = $1 AND episode_id = $2`,
        values: [alert.tenantId, episodeId, status, severity, alertCount, alert.eventAt, now, change === 'reopened'],
      });
    }
    await db.query({
      name: 'episodes-link-alert',
      text: 'UPDATE alerts SET episode_id = $3 WHERE tenant_id = $1 AND alert_id = $2',
      values: [alert.tenantId, alert.alertId, episodeId],
    });
    touched.set(alert.tenantId, [...(touched.get(alert.tenantId) ?? []), episodeId]);
    const members = membersOf(alert);
    await db.query({
      name: 'episodes-members',
      text: `INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at)
             SELECT $1, $2, k, i, r, $6 FROM unnest($3::text[], $4::text[], $5::text[]) AS u(k, i, r)
             ON CONFLICT (tenant_id, episode_id, subject_kind, subject_id) DO UPDATE SET role = 'subject'
             WHERE EXCLUDED.role = 'subject' AND episode_members.role <> 'subject'`,
      values: [alert.tenantId, episodeId, members.map((m) => m.kind), members.map((m) => m.id), members.map((m) => m.role), now],
    });
    for (const member of members) if (member.kind === 'party' && member.role === 'subject') out.parties.add(member.id);
    // A joined episode that is now more severe, or open again, changes the band of every party it
    // is about, not only this alert's.
    if (chosen && (change === 'reopened' || severity !== chosen.severity)) for (const party of await subjectParties(db, alert.tenantId, episodeId)) out.parties.add(party);
    const reference = { episode_id: `${ID_PREFIXES.episode}${episodeId}`, status, severity, alert_count: alertCount };
    const alertRef = `${ID_PREFIXES.alert}${alert.alertId}`;
    if (change === 'reopened') {
      // The case reopens with the episode: its history says so, as if an analyst had done it.
      const { rows: previous } = await db.query<{ case_status: CaseStatus; disposition: Disposition | null; seq: number }>({
        name: 'episodes-reopen-case',
        text: `INSERT INTO case_actions (tenant_id, episode_id, seq, at, actor, case_status, disposition, note)
               SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, 'detection', 'open', NULL, 'reopened by a new alert'
                 FROM case_actions WHERE tenant_id = $1 AND episode_id = $2
               RETURNING seq,
                 (SELECT c.case_status FROM case_actions c WHERE c.tenant_id = $1 AND c.episode_id = $2 ORDER BY c.seq DESC LIMIT 1) AS case_status,
                 (SELECT c.disposition FROM case_actions c WHERE c.tenant_id = $1 AND c.episode_id = $2 ORDER BY c.seq DESC LIMIT 1) AS disposition`,
        values: [alert.tenantId, episodeId, now],
      });
      out.events.push({ tenantId: alert.tenantId, type: 'episode.reopened', data: { ...reference, reason: 'new_alert', alert_id: alertRef } });
      out.events.push({
        tenantId: alert.tenantId,
        type: 'case.status_changed',
        data: { ...reference, case_status: 'open', previous_case_status: previous[0]?.case_status ?? 'closed', previous_disposition: previous[0]?.disposition ?? null, reason: 'new_alert' },
      });
    }
    out.events.push({ tenantId: alert.tenantId, type: 'episode.updated', data: { ...reference, change, alert_id: alertRef } });
    if (escalate) out.events.push({ tenantId: alert.tenantId, type: 'episode.escalated', data: { ...reference, reason: 'threshold', alert_id: alertRef } });
  }
  for (const [tenantId, episodeIds] of touched) await refreshCaseInbox(db, tenantId, episodeIds);
  return out;
}

interface Member {
  kind: 'account' | 'party';
  id: string;
  role: 'subject' | 'counterparty';
}

// The accounts and parties an evidence's counterparties name (`account:A1`, `party:P1`).
function counterpartyMembers(counterparties: readonly string[]): Member[] {
  const members: Member[] = [];
  for (const counterparty of counterparties) {
    const [kind, ...rest] = counterparty.split(':');
    if ((kind === 'account' || kind === 'party') && rest.length > 0) members.push({ kind, id: rest.join(':'), role: 'counterparty' });
  }
  return members;
}

// The alert's subject (and, for an account, its holder) and the accounts and parties its
// evidence names as counterparties.
function membersOf(alert: OpenedAlert): Member[] {
  const members = new Map<string, Member>();
  const add = (member: Member) => {
    const key = `${member.kind}:${member.id}`;
    if (!members.has(key) || member.role === 'subject') members.set(key, member);
  };
  for (const member of counterpartyMembers(alert.counterparties)) add(member);
  add({ ...alert.subject, role: 'subject' });
  if (alert.partyId) add({ kind: 'party', id: alert.partyId, role: 'subject' });
  return [...members.values()];
}

// For each alert, in order: the subject, its party, and every party or account within `hops` of
// either in the horizon. No neighbourhood depends on the episodes assigned before it, so the
// batch's are read before any is assigned, one reachMany per tenant for all their centers.
async function neighbourhoods(
  graph: GraphStore,
  alerts: OpenedAlert[],
  sinceOf: (alert: OpenedAlert) => Date,
  hops: number,
): Promise<Array<Array<{ kind: string; key: string }>>> {
  const centersOf = alerts.map((alert) => {
    const centers: NodeRef[] = [{ kind: alert.subject.kind, key: alert.subject.id }];
    if (alert.partyId && !(alert.subject.kind === 'party' && alert.subject.id === alert.partyId)) centers.push({ kind: 'party', key: alert.partyId });
    return centers;
  });
  const reachedOf = alerts.map((): Array<{ nodes: NodeRef[] }> => []);
  const tenants = new Map<string, number[]>();
  for (const [index, alert] of alerts.entries()) tenants.set(alert.tenantId, [...(tenants.get(alert.tenantId) ?? []), index]);
  for (const [tenantId, indexes] of tenants) {
    const requests = indexes.flatMap((index) => {
      const alert = alerts[index]!;
      const options = { depth: hops, filter: { since: sinceOf(alert), until: alert.eventAt }, nodeCap: NEIGHBOURHOOD_CAP };
      return centersOf[index]!.map((center) => ({ index, center, options }));
    });
    const answers = await graph.reachMany(tenantId, requests.map(({ center, options }) => ({ center, options })));
    requests.forEach(({ index }, n) => reachedOf[index]!.push(answers[n]!));
  }
  return alerts.map((_, index) => {
    const found = new Map<string, { kind: string; key: string }>();
    for (const center of centersOf[index]!) found.set(`${center.kind}:${center.key}`, center);
    for (const sub of reachedOf[index]!) {
      for (const node of sub.nodes) if (node.kind === 'party' || node.kind === 'account') found.set(`${node.kind}:${node.key}`, { kind: node.kind, key: node.key });
    }
    return [...found.values()];
  });
}

// An alert's severity rose with new evidence: its unresolved episode takes the higher severity and
// escalates when that reaches the policy's severity.
export async function raiseEpisodes(db: PoolClient, raised: RaisedAlert[], now: Date, policy: EpisodePolicy = DEFAULT_EPISODE_POLICY): Promise<AssignedEpisodes> {
  const out: AssignedEpisodes = { events: [], parties: new Set() };
  for (const alert of raised) {
    const { rows } = await db.query<{ status: EpisodeRow['status']; severity: Severity; alert_count: number }>({
      name: 'episodes-raise-read',
      text: 'SELECT status, severity, alert_count FROM episodes WHERE tenant_id = $1 AND episode_id = $2',
      values: [alert.tenantId, alert.episodeId],
    });
    const episode = rows[0];
    if (!episode || episode.status === 'resolved' || severityRank(alert.severity) <= severityRank(episode.severity)) continue;
    const escalate = episode.status !== 'escalated' && severityRank(alert.severity) >= severityRank(policy.escalateAtSeverity);
    const status = escalate ? 'escalated' : episode.status;
    await db.query({
      name: 'episodes-raise',
      text: 'UPDATE episodes SET severity = $3, status = $4, updated_at = $5 WHERE tenant_id = $1 AND episode_id = $2',
      values: [alert.tenantId, alert.episodeId, alert.severity, status, now],
    });
    for (const party of await subjectParties(db, alert.tenantId, alert.episodeId)) out.parties.add(party);
    const reference = { episode_id: `${ID_PREFIXES.episode}${alert.episodeId}`, status, severity: alert.severity, alert_count: episode.alert_count };
    const alertRef = `${ID_PREFIXES.alert}${alert.alertId}`;
    out.events.push({ tenantId: alert.tenantId, type: 'episode.updated', data: { ...reference, change: 'severity_raised', alert_id: alertRef } });
    if (escalate) out.events.push({ tenantId: alert.tenantId, type: 'episode.escalated', data: { ...reference, reason: 'threshold', alert_id: alertRef } });
    await refreshCaseInbox(db, alert.tenantId, [alert.episodeId]);
  }
  return out;
}

// The parties an episode is about (its subjects), whose bands follow its severity and status.
async function subjectParties(db: PoolClient, tenantId: string, episodeId: string): Promise<string[]> {
  const { rows } = await db.query<{ subject_id: string }>({
    name: 'episodes-subject-parties',
    text: `SELECT subject_id FROM episode_members WHERE tenant_id = $1 AND episode_id = $2 AND subject_kind = 'party' AND role = 'subject'`,
    values: [tenantId, episodeId],
  });
  return rows.map((row) => row.subject_id);
}

// Alerts kept alive by new hits keep their episodes active: an episode's span follows its alerts'
// hits, so a new alert on the subject weeks later still finds it within the horizon. The
// counterparties a later hit names join the episode as related members, as an opening hit's do.
// The inbox copy is rewritten for an episode whose span or members changed, and for one whose
// alert took a new headline: its amount at stake is read from the headline's evidence (a late
// fact can make the headline stronger inside the span, changing nothing else).
export async function spanEpisodes(db: PoolClient, extended: ExtendedAlert[], now: Date): Promise<void> {
  if (extended.length === 0) return;
  const tenantId = extended[0]!.tenantId;
  const related = extended.flatMap((x) => counterpartyMembers(x.counterparties).map((member) => ({ episodeId: x.episodeId, member })));
  const { rows: joined } = related.length === 0 ? { rows: [] } : await db.query<{ episode_id: string }>({
    name: 'episodes-related',
    text: `INSERT INTO episode_members (tenant_id, episode_id, subject_kind, subject_id, role, added_at)
           SELECT DISTINCT $1, e, k, i, 'counterparty', $5::timestamptz FROM unnest($2::uuid[], $3::text[], $4::text[]) AS u(e, k, i) ORDER BY 2, 3, 4
           ON CONFLICT (tenant_id, episode_id, subject_kind, subject_id) DO NOTHING
           RETURNING episode_id`,
    values: [tenantId, related.map((r) => r.episodeId), related.map((r) => r.member.kind), related.map((r) => r.member.id), now],
  });
  const { rows } = await db.query<{ episode_id: string }>({
    name: 'episodes-span',
    text: `UPDATE episodes e SET first_alert_at = least(e.first_alert_at, x.first_at), last_alert_at = greatest(e.last_alert_at, x.last_at), updated_at = $4
             FROM (SELECT episode_id, min(at) AS first_at, max(at) AS last_at FROM unnest($2::uuid[], $3::timestamptz[]) AS u(episode_id, at) GROUP BY episode_id) x
            WHERE e.tenant_id = $1 AND e.episode_id = x.episode_id AND (x.last_at > e.last_alert_at OR x.first_at < e.first_alert_at)
           RETURNING e.episode_id`,
    values: [tenantId, extended.map((x) => x.episodeId), extended.map((x) => x.eventAt), now],
  });
  const reheaded = extended.filter((x) => x.headline).map((x) => x.episodeId);
  await refreshCaseInbox(db, tenantId, [...new Set([...rows, ...joined].map((row) => row.episode_id).concat(reheaded))]);
}
