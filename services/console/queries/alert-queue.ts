import type { Pool } from '../../../platform/postgres/pool.ts';
import { ALERT_SUMMARY_COLUMNS, type AlertSummaryRow } from '../../cases/store.ts';
import type { ALERT_QUEUE_SORTS, SEVERITIES } from '../../../schemas/console/cases.ts';

// The alert queue: live alerts of one tenant, filtered and in one of three orders, in keyset
// pages. Each order has its index (infra/postgres/0013_console_cases): newest/oldest walk
// alerts_listing or alerts_queue_status, severity walks alerts_queue_severity, whose rank
// expression is SEVERITY_RANK below, character for character.

export const SEVERITY_RANK = `(CASE severity WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 WHEN 'low' THEN 1 ELSE 0 END)`;

export interface AlertQueueFilters {
  status?: 'open' | 'closed';
  severity?: (typeof SEVERITIES)[number];
  detector?: string;
  subject?: string;
  subjectKind?: 'account' | 'party';
  // Created at or after this instant (max_age_h before now).
  since?: Date;
  sort: (typeof ALERT_QUEUE_SORTS)[number];
}

// Where the previous page ended: its last row's created_at (full precision), id and, in
// severity order, its rank.
export interface QueuePosition {
  at: string;
  id: string;
  rank?: number;
}

export interface QueueRow extends AlertSummaryRow {
  severity_rank: number;
}

export async function alertQueue(db: Pick<Pool, 'query'>, tenantId: string, filters: AlertQueueFilters, after: QueuePosition | undefined, limit: number): Promise<QueueRow[]> {
  const values: unknown[] = [tenantId];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const where = [`a.tenant_id = $1`, `a.mode = 'live'`];
  if (filters.status) where.push(`a.status = ${param(filters.status)}`);
  if (filters.severity) where.push(`a.severity = ${param(filters.severity)}`);
  if (filters.detector) where.push(`a.detector_id = ${param(filters.detector)}`);
  if (filters.subject) where.push(`a.subject_id = ${param(filters.subject)}`);
  if (filters.subjectKind) where.push(`a.subject_kind = ${param(filters.subjectKind)}`);
  if (filters.since) where.push(`a.created_at >= ${param(filters.since)}`);
  const rank = SEVERITY_RANK.replace('severity', 'a.severity');
  let order: string;
  if (filters.sort === 'severity') {
    order = `${rank} DESC, a.created_at DESC, a.alert_id DESC`;
    if (after) where.push(`(${rank}, a.created_at, a.alert_id) < (${param(after.rank ?? 0)}::int, ${param(after.at)}::timestamptz, ${param(after.id)}::uuid)`);
  } else if (filters.sort === 'oldest') {
    order = 'a.created_at ASC, a.alert_id ASC';
    if (after) where.push(`(a.created_at, a.alert_id) > (${param(after.at)}::timestamptz, ${param(after.id)}::uuid)`);
  } else {
    order = 'a.created_at DESC, a.alert_id DESC';
    if (after) where.push(`(a.created_at, a.alert_id) < (${param(after.at)}::timestamptz, ${param(after.id)}::uuid)`);
  }
  const { rows } = await db.query<QueueRow>(
    `SELECT ${ALERT_SUMMARY_COLUMNS}, ${rank} AS severity_rank FROM alerts a WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${param(limit)}`,
    values,
  );
  return rows;
}
