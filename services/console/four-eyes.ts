// Four-eyes reporting (docs/decisions/0031-four-eyes-reporting.md): filing a suspicious-activity
// report is proposed with a narrative by any console user and takes effect only when a supervisor
// other than the proposer approves it; the approval applies the disposition through the case
// pipeline (the same rules, history and events as every case action). A rejection sends the case
// back to the proposer (assigned to them, while they are an active user). One user's status or
// disposition change can neither undo a filed report nor close a case whose proposal waits
// (fourEyesCaseRule). Each step is audited in its own transaction.
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import { applyCaseAction, type CaseActionRule } from '../cases/actions.ts';
import { lockTenantDetection } from '../detection/detection-lock.ts';
import { refreshCaseInbox } from '../cases/inbox.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { episodeExists } from '../cases/store.ts';
import { activeUserOfTenant, lockAssignment, setAssignee } from './queries/cases.ts';
import { decideProposal, insertProposal, lockPendingProposal, reportProposals, type ReportProposalRow } from './queries/case-reports.ts';
import type { ConsoleUser } from './store.ts';

export const REPORT_DISPOSITION = 'suspicious_activity_reported';

export type ReportOutcome =
  // 200 with the proposal as it now stands.
  | { kind: 'done'; proposal: ReportProposalRow }
  // 404: no such case in the tenant.
  | { kind: 'not_found' }
  // 409: a proposal already pends, none pends, or the report is already filed.
  | { kind: 'conflict'; detail: string }
  // 403: not a supervisor, or the proposer deciding their own proposal.
  | { kind: 'forbidden'; detail: string }
  // 400: the case pipeline refused the disposition.
  | { kind: 'invalid'; errors: FieldError[] };

// Appends the step to console_audit in the step's transaction.
export type AuditStep = (db: PoolClient, action: string, details: Record<string, unknown>) => Promise<void>;

// The race an approval can lose once inside the case action's transaction: it rolls back.
class DecisionRace extends Error {}

// Detection's tenant lock first, then the row: detection changes episodes (and their inbox rows)
// under that lock, so a case change that locked a row first could deadlock with it.
async function lockEpisode(db: PoolClient, tenantId: string, episodeId: string): Promise<{ disposition: string | null } | undefined> {
  await lockTenantDetection(db, tenantId);
  const { rows } = await db.query<{ disposition: string | null }>('SELECT disposition FROM episodes WHERE tenant_id = $1 AND episode_id = $2 FOR UPDATE', [tenantId, episodeId]);
  return rows[0];
}

const latest = async (db: Pick<Pool, 'query'>, tenantId: string, episodeId: string, proposalId: string) =>
  (await reportProposals(db, tenantId, episodeId)).find((p) => p.proposal_id === proposalId)!;

export async function proposeReport(pool: Pool, user: ConsoleUser, episodeId: string, narrative: string, now: Date, audit: AuditStep): Promise<ReportOutcome> {
  const tenantId = user.tenant_id;
  return withTransaction(pool, async (db) => {
    const episode = await lockEpisode(db, tenantId, episodeId);
    if (!episode) return { kind: 'not_found' };
    if (episode.disposition === REPORT_DISPOSITION) return { kind: 'conflict', detail: 'a report is already filed for this case' };
    if (await lockPendingProposal(db, tenantId, episodeId)) return { kind: 'conflict', detail: 'a report proposal for this case already waits for approval' };
    const proposalId = await insertProposal(db, tenantId, episodeId, narrative, user.user_id, now);
    await refreshCaseInbox(db, tenantId, [episodeId]);
    await audit(db, 'case.report_proposed', { proposal_id: proposalId, narrative_chars: narrative.length });
    return { kind: 'done', proposal: await latest(db, tenantId, episodeId, proposalId) };
  });
}

// What one console user's status or disposition change may not do to the four-eyes rule: take a
// filed report away (change the disposition an approval applied, or reopen its case), or close a
// case with another disposition while a report proposal for it waits, which would decide alone
// not to report (and a later approval would silently turn that decision over). Undoing a filed
// report is an amended filing; a waiting proposal is rejected by a supervisor first.
export function fourEyesCaseRule(tenantId: string, episodeId: string): CaseActionRule {
  return async (db, { from, to }) => {
    if (from.disposition === REPORT_DISPOSITION) return 'a report is filed for this case: its disposition and status stay as its approval left them';
    if (to.caseStatus === 'closed' && (await lockPendingProposal(db, tenantId, episodeId))) {
      return 'a report proposal for this case waits for a supervisor: it is approved or rejected before the case is closed otherwise';
    }
    return undefined;
  };
}

// Who may decide the pending proposal: a supervisor who did not propose it.
function refusal(user: ConsoleUser, pending: ReportProposalRow): ReportOutcome | undefined {
  if (user.role !== 'supervisor') return { kind: 'forbidden', detail: 'only a supervisor approves or rejects a report proposal' };
  if (pending.proposed_by === user.user_id) return { kind: 'forbidden', detail: 'four eyes: a report proposal is decided by a supervisor other than its proposer' };
  return undefined;
}

export async function decideReport(
  pool: Pool,
  user: ConsoleUser,
  episodeId: string,
  decision: 'approve' | 'reject',
  reason: string,
  now: Date,
  audit: AuditStep,
): Promise<ReportOutcome> {
  const tenantId = user.tenant_id;
  if (decision === 'reject') {
    return withTransaction(pool, async (db) => {
      if (!(await lockEpisode(db, tenantId, episodeId))) return { kind: 'not_found' };
      const pending = await lockPendingProposal(db, tenantId, episodeId);
      if (!pending) return { kind: 'conflict', detail: 'no report proposal of this case waits for a decision' };
      const refused = refusal(user, pending);
      if (refused) return refused;
      await decideProposal(db, tenantId, pending.proposal_id, 'rejected', user.user_id, reason, now);
      // Back to the proposer's work, unless the proposer can no longer work (disabled since): a case
      // assigned to them could then neither be taken nor seen as unassigned, so it stays as it was.
      const current = await lockAssignment(db, tenantId, episodeId);
      if (current !== pending.proposed_by && (await activeUserOfTenant(db, tenantId, pending.proposed_by))) {
        await setAssignee(db, tenantId, episodeId, pending.proposed_by, user.user_id, now);
        await audit(db, 'case.assigned', { from: current, to: pending.proposed_by, to_email: pending.proposed_by_email, reason: 'report_rejected' });
      }
      await refreshCaseInbox(db, tenantId, [episodeId]);
      await audit(db, 'case.report_rejected', { proposal_id: pending.proposal_id, proposed_by: pending.proposed_by_email, reason });
      return { kind: 'done', proposal: await latest(db, tenantId, episodeId, pending.proposal_id) };
    });
  }

  // Checked first for a clear answer, and again inside the case action's transaction.
  const pending = (await reportProposals(pool, tenantId, episodeId)).find((p) => p.state === 'pending');
  if (!pending) {
    return (await episodeExists(pool, tenantId, episodeId)) ? { kind: 'conflict', detail: 'no report proposal of this case waits for a decision' } : { kind: 'not_found' };
  }
  const refused = refusal(user, pending);
  if (refused) return refused;
  const note = `report approved by ${user.email}, proposed by ${pending.proposed_by_email} (proposal ${pending.proposal_id})`;
  try {
    const outcome = await applyCaseAction(
      pool,
      { tenantId, episodeId, disposition: REPORT_DISPOSITION, note, actor: `console:${user.user_id}` },
      now,
      async (db, applied) => {
        const still = await lockPendingProposal(db, tenantId, episodeId);
        if (!still || still.proposal_id !== pending.proposal_id) throw new DecisionRace();
        await decideProposal(db, tenantId, pending.proposal_id, 'approved', user.user_id, reason, now);
        await refreshCaseInbox(db, tenantId, [episodeId]);
        await audit(db, 'case.report_approved', { proposal_id: pending.proposal_id, proposed_by: pending.proposed_by_email, reason, disposition: REPORT_DISPOSITION, ...applied });
      },
    );
    if (outcome.kind === 'not_found') return outcome;
    if (outcome.kind === 'invalid') return outcome;
  } catch (error) {
    if (error instanceof DecisionRace) return { kind: 'conflict', detail: 'the report proposal was decided meanwhile' };
    throw error;
  }
  return { kind: 'done', proposal: await latest(pool, tenantId, episodeId, pending.proposal_id) };
}
