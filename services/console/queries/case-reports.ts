import { uuidv7 } from '../../../platform/ids.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';

// Four-eyes report proposals (infra/postgres/0024 case_report_proposals).

type Db = Pick<Pool, 'query'>;

export interface ReportProposalRow {
  proposal_id: string;
  episode_id: string;
  state: 'pending' | 'approved' | 'rejected';
  narrative: string;
  proposed_by: string;
  proposed_by_email: string;
  proposed_at: Date;
  decided_by: string | null;
  decided_by_email: string | null;
  decided_at: Date | null;
  decision_reason: string | null;
}

const COLUMNS = `p.proposal_id, p.episode_id, p.state, p.narrative, p.proposed_by, pu.email AS proposed_by_email, p.proposed_at,
  p.decided_by, du.email AS decided_by_email, p.decided_at, p.decision_reason`;
const FROM = `case_report_proposals p JOIN console_users pu ON pu.user_id = p.proposed_by LEFT JOIN console_users du ON du.user_id = p.decided_by`;

// Newest first.
export async function reportProposals(db: Db, tenantId: string, episodeId: string): Promise<ReportProposalRow[]> {
  const { rows } = await db.query<ReportProposalRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE p.tenant_id = $1 AND p.episode_id = $2 ORDER BY p.proposed_at DESC, p.proposal_id DESC`, [
    tenantId,
    episodeId,
  ]);
  return rows;
}

// The case's pending proposal, locked until the caller's transaction ends.
export async function lockPendingProposal(db: Db, tenantId: string, episodeId: string): Promise<ReportProposalRow | undefined> {
  const { rows } = await db.query<ReportProposalRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE p.tenant_id = $1 AND p.episode_id = $2 AND p.state = 'pending' FOR UPDATE OF p`,
    [tenantId, episodeId],
  );
  return rows[0];
}

export async function insertProposal(db: Db, tenantId: string, episodeId: string, narrative: string, by: string, at: Date): Promise<string> {
  const proposalId = uuidv7(at.getTime());
  await db.query(
    `INSERT INTO case_report_proposals (tenant_id, proposal_id, episode_id, state, narrative, proposed_by, proposed_at) VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
    [tenantId, proposalId, episodeId, narrative, by, at],
  );
  return proposalId;
}

export async function decideProposal(db: Db, tenantId: string, proposalId: string, state: 'approved' | 'rejected', by: string, reason: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE case_report_proposals SET state = $3, decided_by = $4, decision_reason = $5, decided_at = $6 WHERE tenant_id = $1 AND proposal_id = $2 AND state = 'pending'`,
    [tenantId, proposalId, state, by, reason, at],
  );
}
