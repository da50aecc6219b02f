import type { Pool } from '../../../platform/postgres/pool.ts';
import { DEFAULT_CASE_SLA_HOURS, type CaseSlaHours } from '../../cases/inbox.ts';

// The tenant's case SLA (infra/postgres/0024 case_sla); no row means the defaults.

type Db = Pick<Pool, 'query'>;

export interface CaseSlaRow {
  hours: CaseSlaHours;
  customised: boolean;
  updated_at: Date | null;
  updated_by: string | null;
}

export async function findCaseSla(db: Db, tenantId: string): Promise<CaseSlaRow> {
  const { rows } = await db.query<{ critical_h: number; high_h: number; medium_h: number; low_h: number; updated_at: Date; email: string | null }>(
    `SELECT s.critical_h, s.high_h, s.medium_h, s.low_h, s.updated_at, u.email
       FROM case_sla s LEFT JOIN console_users u ON u.user_id = s.updated_by WHERE s.tenant_id = $1`,
    [tenantId],
  );
  const row = rows[0];
  if (!row) return { hours: { ...DEFAULT_CASE_SLA_HOURS }, customised: false, updated_at: null, updated_by: null };
  return { hours: { critical: row.critical_h, high: row.high_h, medium: row.medium_h, low: row.low_h }, customised: true, updated_at: row.updated_at, updated_by: row.email };
}

export async function saveCaseSla(db: Db, tenantId: string, hours: CaseSlaHours, by: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO case_sla (tenant_id, critical_h, high_h, medium_h, low_h, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id) DO UPDATE SET critical_h = excluded.critical_h, high_h = excluded.high_h, medium_h = excluded.medium_h,
       low_h = excluded.low_h, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
    [tenantId, hours.critical, hours.high, hours.medium, hours.low, at, by],
  );
}
