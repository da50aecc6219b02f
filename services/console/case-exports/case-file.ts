import type { AssetRegistry } from '../../../schemas/assets/registry.ts';
import type { StoredAccountData, StoredPartyData } from '../../../schemas/families/stored.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { caseNotes } from '../queries/case-notes.ts';
import { reportProposals } from '../queries/case-reports.ts';
import { caseAudit, caseViewCount, findAssignee, type Assignee, type AuditRow, type CaseViewCount } from '../queries/cases.ts';
import { caseActions, type CaseActionRow } from '../../cases/store.ts';
import { citedMovements as everyCitedMovement, movementsByIds, type CaseMovementRow } from '../queries/case-timeline.ts';
import { caseAlerts, entitiesByIds, findCase, MAX_EXPORT_MOVEMENTS, type CaseAlertRow, type CaseRow } from './store.ts';

// Everything a case's exports show, read once: the goAML report and the case file are both
// renderings of this.

type Db = Pick<Pool, 'query'>;

// The audit entries an export carries, oldest first, views of the case apart: those are counted,
// not listed, so page loads never push the story (assignments, proposals, exports) out of the file
// meant for outside readers. A longer story is said to be cut.
const MAX_EXPORT_AUDIT = 2000;
const MAX_EXPORT_NOTES = 1000;

interface CaseNoteEntry {
  at: Date;
  author: string;
  body: string;
}

interface ApprovedReport {
  narrative: string;
  proposedBy: string;
  proposedAt: Date;
  approvedBy: string;
  approvedAt: Date;
}

export interface CaseFile {
  tenantId: string;
  baseAsset: string;
  assets: AssetRegistry;
  case: CaseRow;
  assignee: Assignee | null;
  alerts: CaseAlertRow[];
  // Every movement the alerts' evidence cites, oldest first.
  movements: CaseMovementRow[];
  // Cited ids beyond MAX_EXPORT_MOVEMENTS, or cited but not (yet) in the canonical store.
  movementsLeftOut: string[];
  parties: Map<string, StoredPartyData>;
  accounts: Map<string, StoredAccountData>;
  actions: CaseActionRow[];
  // The audit entries other than views.
  audit: AuditRow[];
  auditTruncated: boolean;
  views: CaseViewCount;
  notes: CaseNoteEntry[];
  notesTruncated: boolean;
  report: ApprovedReport | null;
}

// The movement ids the evidence cites, most relevant first within each alert, alerts oldest first;
// then those cited only by evidence entries older than the export shows (an alert's latest
// MAX_EXPORT_EVIDENCE), so the report names every movement the case page does.
function citedMovements(alerts: readonly CaseAlertRow[], everyCited: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const alert of alerts) {
    for (const entry of alert.evidence) {
      const listed = entry.evidence.movements;
      if (Array.isArray(listed)) for (const id of listed) if (typeof id === 'string') ids.add(id);
    }
  }
  for (const id of everyCited) ids.add(id);
  return [...ids];
}

// The cited movements and the movements that correct them (a chain to its last link, a few links
// at most): a case reports what the institution's ledger now holds, the corrected one marked.
const CORRECTION_LINKS = 5;
async function withCorrections(db: Db, tenantId: string, cited: CaseMovementRow[]): Promise<CaseMovementRow[]> {
  const all = new Map(cited.map((m) => [m.external_id, m]));
  let next = cited;
  for (let link = 0; link < CORRECTION_LINKS && all.size < MAX_EXPORT_MOVEMENTS; link++) {
    const missing = [...new Set(next.map((m) => m.corrected_by).filter((id): id is string => id !== null && !all.has(id)))];
    if (missing.length === 0) break;
    next = await movementsByIds(db, tenantId, missing.slice(0, MAX_EXPORT_MOVEMENTS - all.size));
    for (const m of next) all.set(m.external_id, m);
  }
  return [...all.values()].sort((a, b) => a.occurred_at.getTime() - b.occurred_at.getTime() || (a.external_id < b.external_id ? -1 : a.external_id > b.external_id ? 1 : 0));
}

export async function loadCaseFile(
  db: Db,
  tenantId: string,
  episodeId: string,
  assets: (tenantId: string) => Promise<AssetRegistry>,
): Promise<CaseFile | undefined> {
  // 1. The case, in this tenant only.
  const found = await findCase(db, tenantId, episodeId);
  if (!found) return undefined;
  // 2. Its alerts and the movements they cite.
  const alerts = await caseAlerts(db, tenantId, episodeId);
  const cited = citedMovements(alerts, (await everyCitedMovement(db, tenantId, episodeId)).map((c) => c.movement_id));
  const movements = await withCorrections(db, tenantId, await movementsByIds(db, tenantId, cited.slice(0, MAX_EXPORT_MOVEMENTS)));
  const loaded = new Set(movements.map((m) => m.external_id));
  // 3. The parties and accounts on those movements and among the case's subjects, and the holders of the accounts.
  const subjects = [...found.subjects, ...found.related];
  const accountIds = [
    ...movements.flatMap((m) => [m.debit_account_id, m.credit_account_id]).filter((id): id is string => id !== null),
    ...subjects.filter((s) => s.kind === 'account').map((s) => s.external_id),
  ];
  const accounts = await entitiesByIds(db, tenantId, 'account', accountIds);
  const partyIds = [
    ...movements.flatMap((m) => [m.debit_party_id, m.credit_party_id]).filter((id): id is string => id !== null),
    ...subjects.filter((s) => s.kind === 'party').map((s) => s.external_id),
    ...[...accounts.values()].map((a) => a.holder_party_id).filter((id): id is string => typeof id === 'string'),
  ];
  const parties = await entitiesByIds(db, tenantId, 'party', partyIds);
  // 4. Who did what: case actions, the console audit (newest first there) and its views counted, notes, the report.
  const audit = await caseAudit(db, tenantId, `epsd_${episodeId}`, undefined, MAX_EXPORT_AUDIT + 1, 'story');
  const notes = await caseNotes(db, tenantId, episodeId, undefined, MAX_EXPORT_NOTES + 1);
  // The narrative filed is the latest approved proposal's (newest first).
  const approved = (await reportProposals(db, tenantId, episodeId)).find((p) => p.state === 'approved');
  return {
    tenantId,
    baseAsset: found.base_asset,
    assets: await assets(tenantId),
    case: found,
    assignee: await findAssignee(db, tenantId, episodeId),
    alerts,
    movements,
    movementsLeftOut: cited.filter((id) => !loaded.has(id)),
    parties,
    accounts,
    actions: await caseActions(db, tenantId, episodeId, 'email'),
    audit: audit.slice(0, MAX_EXPORT_AUDIT).reverse(),
    auditTruncated: audit.length > MAX_EXPORT_AUDIT,
    views: await caseViewCount(db, tenantId, `epsd_${episodeId}`),
    notes: notes.slice(0, MAX_EXPORT_NOTES).map((n) => ({ at: n.created_at, author: n.author_email, body: n.body })),
    notesTruncated: notes.length > MAX_EXPORT_NOTES,
    report:
      approved && approved.decided_at
        ? { narrative: approved.narrative, proposedBy: approved.proposed_by_email, proposedAt: approved.proposed_at, approvedBy: approved.decided_by_email ?? approved.decided_by ?? '', approvedAt: approved.decided_at }
        : null,
  };
}
