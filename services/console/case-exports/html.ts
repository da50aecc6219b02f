import type { CaseFile } from './case-file.ts';
import { html, markupText, type Markup } from './html-writer.ts';
import { formatMoney } from './money.ts';
import type { CaseMovementRow } from '../queries/case-timeline.ts';

// The readable case file: one print-ready HTML page (stylesheet at CASE_FILE_CSS_PATH, no script,
// nothing inline, so it renders under the console's CSP) with the summary, subjects, narrative,
// alerts with their evidence, movements, notes, case history and audit trail.

export const CASE_FILE_CSS_PATH = '/console/v1/case-file.css';

const when = (at: Date | string | null | undefined) => (at ? new Date(at).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC') : '—');
const DIGITS = /^-?\d+$/;

export function renderCaseFile(file: CaseFile, meta: { generatedAt: Date; generatedBy: string }): string {
  const caseRef = `epsd_${file.case.episode_id}`;
  const anchors = new Map(file.movements.map((m, i) => [m.external_id, `mv-${i + 1}`]));

  // Money in minor units of an asset, by the asset's scale in the tenant's registry.
  const money = (minor: string | bigint, asset: string): string => {
    const scale = file.assets.scaleOf(asset);
    return scale === undefined ? `${minor} minor units of ${asset}` : formatMoney(BigInt(minor), asset, scale);
  };
  const movementLink = (id: string): Markup => {
    const anchor = anchors.get(id);
    return anchor ? html`<a href="#${anchor}">${id}</a>` : html`<span>${id}</span>`;
  };
  const nameOf = (kind: string, id: string): string => {
    if (kind === 'party') {
      const party = file.parties.get(id);
      return party ? [Array.isArray(party.legal_names) ? party.legal_names[0] : undefined, party.type].filter(Boolean).join(', ') : '';
    }
    const account = file.accounts.get(id);
    if (!account) return '';
    const holder = typeof account.holder_party_id === 'string' ? account.holder_party_id : undefined;
    return [account.type, account.asset, holder ? `held by ${holder}` : undefined].filter(Boolean).join(', ');
  };

  const subjectRows = (list: CaseFile['case']['subjects'], role: string) =>
    list.map((s) => html`<tr><td>${role}</td><td>${s.kind}</td><td>${s.external_id}</td><td>${nameOf(s.kind, s.external_id)}</td></tr>`);

  const evidenceOf = (entry: CaseFile['alerts'][number]['evidence'][number]): Markup => {
    const e = entry.evidence;
    const asset = typeof e.amounts?.asset === 'string' ? e.amounts.asset : file.baseAsset;
    const value = (v: unknown) => (typeof v === 'string' && DIGITS.test(v) ? money(v, asset) : String(v));
    const amounts = e.amounts
      ? html`<p>Total ${value(e.amounts.total)} over ${e.amounts.count} movements${e.amounts.in !== undefined ? html`; in ${value(e.amounts.in)}` : ''}${e.amounts.out !== undefined ? html`; out ${value(e.amounts.out)}` : ''}${e.window ? html`; window ${when(e.window.from)} – ${when(e.window.to)}` : ''}.</p>`
      : '';
    const thresholds: Array<{ name: string; observed: unknown; threshold: unknown }> = Array.isArray(e.thresholds) ? e.thresholds : [];
    return html`<div class="evidence">
      <h4>Evidence ${entry.seq}, ${when(entry.event_at)}, ${entry.severity}</h4>
      ${amounts}
      ${thresholds.length > 0 ? html`<table class="thresholds"><thead><tr><th>Measure</th><th>Observed / threshold</th></tr></thead><tbody>${thresholds.map((t) => html`<tr><td>${t.name}</td><td>${value(t.observed)} / ${value(t.threshold)}</td></tr>`)}</tbody></table>` : ''}
      ${e.baseline ? html`<p>Baseline over ${e.baseline.days} days (${e.baseline.metric}): mean ${value(e.baseline.mean)}, observed ${value(e.baseline.observed)}.</p>` : ''}
      ${Array.isArray(e.movements) && e.movements.length > 0 ? html`<p>Movements: ${e.movements.map((id: string, i: number) => html`${i > 0 ? ', ' : ''}${movementLink(String(id))}`)}</p>` : ''}
      ${Array.isArray(e.counterparties) && e.counterparties.length > 0 ? html`<p>Counterparties: ${e.counterparties.join(', ')}</p>` : ''}
    </div>`;
  };

  const side = (m: CaseMovementRow, which: 'debit' | 'credit') => {
    const account = which === 'debit' ? m.debit_account_id : m.credit_account_id;
    const party = which === 'debit' ? m.debit_party_id : m.credit_party_id;
    const cp = m.data?.[which]?.counterparty;
    const external = cp ? [cp.name_as_given, cp.institution, cp.country].filter((v) => typeof v === 'string').join(', ') : '';
    const name = party ? nameOf('party', party) : '';
    return [account ? `account ${account}` : '', party ? `party ${party}${name ? ` (${name})` : ''}` : '', external].filter((v) => v !== '').join(' · ') || '—';
  };
  const movementRow = (m: CaseMovementRow) => {
    const n = m.normalized;
    const base = n?.status === 'normalized' ? money(n.amount.value, n.amount.asset) : n?.status === 'unavailable' ? `no ${file.baseAsset} rate` : '';
    return html`<tr id="${anchors.get(m.external_id)}"><td>${m.external_id}${m.corrected_by !== null ? html` (corrected by ${movementLink(m.corrected_by)})` : ''}</td><td>${when(m.occurred_at)}</td><td>${m.type}</td><td>${m.status}</td><td>${side(m, 'debit')}</td><td>${side(m, 'credit')}</td><td class="num">${money(m.amount_value, m.amount_asset)}</td><td class="num">${base}</td></tr>`;
  };

  const report = file.report;
  const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Case file ${caseRef}</title>
<link rel="stylesheet" href="${CASE_FILE_CSS_PATH}">
</head>
<body>
<header>
  <h1>Case file ${caseRef}</h1>
  <p class="meta">Tenant ${file.tenantId}. Generated ${when(meta.generatedAt)} by ${meta.generatedBy}.</p>
</header>

<section id="summary"><h2>Summary</h2>
<table class="pairs"><tbody>
<tr><th>Case status</th><td>${file.case.case_status}</td></tr>
<tr><th>Disposition</th><td>${file.case.disposition ?? 'none'}</td></tr>
<tr><th>Episode status</th><td>${file.case.status}</td></tr>
<tr><th>Severity</th><td>${file.case.severity}</td></tr>
<tr><th>Assignee</th><td>${file.assignee?.email ?? 'unassigned'}</td></tr>
<tr><th>Alerts</th><td>${file.alerts.length}, ${when(file.case.first_alert_at)} – ${when(file.case.last_alert_at)}</td></tr>
<tr><th>Typologies</th><td>${[...new Set(file.alerts.map((a) => a.typology))].join('; ') || '—'}</td></tr>
<tr><th>Movements cited</th><td>${file.movements.length}${file.movementsLeftOut.length > 0 ? ` (${file.movementsLeftOut.length} more not shown)` : ''}</td></tr>
</tbody></table>
</section>

<section id="subjects"><h2>Subjects</h2>
<table><thead><tr><th>Role</th><th>Kind</th><th>Id</th><th>Details</th></tr></thead>
<tbody>${subjectRows(file.case.subjects, 'subject')}${subjectRows(file.case.related, 'counterparty')}</tbody></table>
</section>

<section id="narrative"><h2>Narrative</h2>
${
  report
    ? html`<p class="meta">Report proposed by ${report.proposedBy} at ${when(report.proposedAt)}, approved by ${report.approvedBy} at ${when(report.approvedAt)}.</p><div class="text">${report.narrative}</div>`
    : html`<p class="meta">No approved report; what the alerts explain:</p>${file.alerts.map((a) => html`<div class="text">${a.typology}: ${a.explanation}</div>`)}`
}
</section>

<section id="alerts"><h2>Alerts and evidence</h2>
${file.alerts.map(
  (a) => html`<article class="alert">
  <h3>${a.typology} <span class="tag">${a.severity}</span></h3>
  <p class="meta">alrt_${a.alert_id} · detector ${a.detector_id} · score ${a.score} · ${a.status} · on ${a.subject_kind} ${a.subject_id} · window ${when(a.window_from)} – ${when(a.window_to)} · raised ${when(a.created_at)}</p>
  <p>${a.summary}</p>
  <div class="text">${a.explanation}</div>
  ${a.evidence.map(evidenceOf)}
</article>`,
)}
</section>

<section id="movements"><h2>Movements</h2>
<table><thead><tr><th>Id</th><th>Occurred</th><th>Type</th><th>Status</th><th>From</th><th>To</th><th>Amount</th><th>In ${file.baseAsset}</th></tr></thead>
<tbody>${file.movements.map(movementRow)}</tbody></table>
</section>

<section id="notes"><h2>Notes</h2>
${file.notesTruncated ? html`<p class="meta">Only the first ${file.notes.length} notes are shown.</p>` : ''}
${file.notes.length === 0 ? html`<p>No notes.</p>` : file.notes.map((n) => html`<div class="note"><p class="meta">${n.author}, ${when(n.at)}</p><div class="text">${n.body}</div></div>`)}
</section>

<section id="history"><h2>Case history</h2>
<table><thead><tr><th>When</th><th>Who</th><th>Status</th><th>Disposition</th><th>Note</th></tr></thead>
<tbody>${file.actions.map((c) => html`<tr><td>${when(c.at)}</td><td>${c.actor}</td><td>${c.case_status}</td><td>${c.disposition ?? ''}</td><td class="text">${c.note ?? ''}</td></tr>`)}</tbody></table>
</section>

<section id="audit"><h2>Audit trail</h2>
${file.auditTruncated ? html`<p class="meta">Only the latest ${file.audit.length} entries are shown.</p>` : ''}
<p class="meta">${viewsLine(file.views)}</p>
<table><thead><tr><th>When</th><th>Who</th><th>Action</th><th>Details</th></tr></thead>
<tbody>${file.audit.map((r) => html`<tr><td>${when(r.at)}</td><td>${r.actor_email ?? r.actor_kind}</td><td>${r.action}</td><td class="text">${Object.keys(r.details).length > 0 ? JSON.stringify(r.details) : ''}</td></tr>`)}</tbody></table>
</section>
</body>
</html>
`;
  return markupText(page);
}

// Views of the case are counted, not listed: they are most of the audit and none of the story.
function viewsLine(views: CaseFile['views']): string {
  if (views.views === 0) return 'The case was not viewed in the console.';
  const users = `${views.viewers} user${views.viewers === 1 ? '' : 's'}`;
  return `Views of the case, not listed: ${views.views} by ${users}, ${when(views.first_at)} – ${when(views.last_at)}.`;
}

// Screen and print: A4, tables that break between rows, links printed as text.
export const CASE_FILE_CSS = `body { font: 10.5pt/1.4 system-ui, sans-serif; color: #111; margin: 2rem auto; max-width: 60rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; border-bottom: 1px solid #999; margin-top: 2rem; } h3 { font-size: 1.05rem; } h4 { font-size: 0.95rem; margin: 0.8rem 0 0.2rem; }
table { border-collapse: collapse; width: 100%; margin: 0.4rem 0; } th, td { border: 1px solid #ccc; padding: 0.2rem 0.4rem; text-align: left; vertical-align: top; }
table.pairs th { width: 12rem; background: #f4f4f4; } td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.meta { color: #555; font-size: 0.9em; } .text { white-space: pre-wrap; overflow-wrap: anywhere; } .tag { font-size: 0.8em; border: 1px solid #999; border-radius: 3px; padding: 0 0.3rem; }
.alert { border-left: 3px solid #999; padding-left: 0.8rem; margin: 1rem 0; } .evidence { margin-left: 0.5rem; }
tr:target { background: #fff3b0; }
@page { size: A4; margin: 15mm; }
@media print { body { margin: 0; max-width: none; } a { color: inherit; text-decoration: none; } tr, .evidence, .note { break-inside: avoid; } h2 { break-after: avoid; } }
`;
