import type { CaseFile } from './case-file.ts';
import { clip, country, dateOnly, entity, idWithin, isPerson, legalName, person, sqlDate, UNKNOWN } from './goaml-fields.ts';
import { localPerForeign, minorToDecimal } from './money.ts';
import type { ReportingEntity } from './reporting-entity.ts';
import type { CaseMovementRow } from '../queries/case-timeline.ts';
import type { StoredMovementData, StoredPartyData } from '../../../schemas/families/stored.ts';
import { decimalToScaled } from '../../../platform/fx/math.ts';
import { el, leaf, type XmlNode } from './xml-writer.ts';

// A case as a goAML report (UNODC goAML schema 5.0.1, test/fixtures/goaml): an STR from the
// tenant's reporting entity, the movements the alerts cite as transactions, the narrative as the
// reason, the detectors as indicators. Only elements goAML 5.0 knows are written (none marked
// supportedIn 5.1 or later), so FIUs still on 5.0 accept it. Mapping choices, and what is written
// where our data lacks a mandatory field: docs/decisions/0032-goaml-export.md.

// goAML's decimals carry at most 13 places.
const RATE_PLACES = 10;
const ISO_CURRENCY = /^[A-Z]{3}$/;

export type GoamlOutcome =
  // 200, the document.
  | { kind: 'report'; document: XmlNode; transactions: number; leftOut: string[] }
  // 404 (svc:resource/not_found, saying why): goAML amounts are in an ISO 4217 currency; a
  // tenant whose base asset is not one cannot report.
  | { kind: 'local_currency_not_iso'; asset: string };

type Counterparty = NonNullable<StoredMovementData['debit']['counterparty']>;

const partyNode = (name: (kind: 'person' | 'entity') => string, partyId: string, party: StoredPartyData | undefined) =>
  isPerson(party) ? el(name('person'), person(partyId, party)) : el(name('entity'), entity(partyId, party));

export function goamlReport(file: CaseFile, rentity: ReportingEntity, now: Date): GoamlOutcome {
  const local = file.baseAsset;
  if (!ISO_CURRENCY.test(local)) return { kind: 'local_currency_not_iso', asset: local };
  const caseRef = `epsd_${file.case.episode_id}`;

  // An account of ours (or, when the movement names the counterparty's institution, of theirs).
  const account = (accountId: string, counterparty: Counterparty | undefined): XmlNode[] => {
    const data = file.accounts.get(accountId);
    const holderId = typeof data?.holder_party_id === 'string' ? data.holder_party_id : undefined;
    const holder = holderId ? file.parties.get(holderId) : undefined;
    const institution = counterparty?.institution;
    const elsewhere = institution !== undefined;
    return [
      leaf('institution_name', clip(institution ?? rentity.institution_name, 255)),
      leaf('institution_code', elsewhere ? UNKNOWN : rentity.institution_code),
      leaf('account', idWithin(accountId, 255)),
      typeof data?.asset === 'string' && ISO_CURRENCY.test(data.asset) && leaf('currency_code', data.asset),
      holder && legalName(holder) && leaf('account_name', clip(legalName(holder)!, 255)),
      holderId && Array.from(holderId).length <= 30 && leaf('client_number', holderId),
      holderId && !isPerson(holder) && el('t_entity', entity(holderId, holder)),
      holderId && isPerson(holder) && el('signatory', el('t_person', person(holderId, holder))),
      dateOnly(data?.opened_at) !== undefined && leaf('opened', dateOnly(data?.opened_at)!),
      dateOnly(data?.closed_at) !== undefined && leaf('closed', dateOnly(data?.closed_at)!),
    ].filter((n): n is XmlNode => Boolean(n));
  };

  // One side of a movement: t_from or t_to, with the account, else the party, else what the
  // movement says of an external counterparty.
  const side = (m: CaseMovementRow, which: 'debit' | 'credit'): XmlNode => {
    const p = which === 'debit' ? 'from' : 'to';
    const accountId = which === 'debit' ? m.debit_account_id : m.credit_account_id;
    const partyId = which === 'debit' ? m.debit_party_id : m.credit_party_id;
    const counterparty = m.data?.[which]?.counterparty;
    const accountData = accountId ? file.accounts.get(accountId) : undefined;
    const party = partyId ? file.parties.get(partyId) : undefined;
    let holder: XmlNode;
    if (accountId) holder = el(`${p}_account`, account(accountId, counterparty));
    else if (partyId) holder = partyNode((kind) => `${p}_${kind}`, partyId, party);
    else if (typeof counterparty?.institution === 'string' || typeof counterparty?.instrument_ref === 'string') {
      holder = el(
        `${p}_account`,
        leaf('institution_name', clip(counterparty.institution ?? UNKNOWN, 255)),
        leaf('institution_code', UNKNOWN),
        leaf('account', idWithin(counterparty.instrument_ref ?? UNKNOWN, 255)),
        typeof counterparty.name_as_given === 'string' && counterparty.name_as_given.trim() !== '' && leaf('account_name', clip(counterparty.name_as_given, 255)),
      );
    } else holder = el(`${p}_entity`, leaf('name', clip(counterparty?.name_as_given?.trim() || UNKNOWN, 255)));
    const where =
      country(counterparty?.country) ??
      country(accountData?.jurisdiction) ??
      country(party?.jurisdictions?.residency) ??
      country(party?.jurisdictions?.registration) ??
      rentity.country_code;
    // The movement's own currency, when not the local one: funds leave in it; they arrive in it
    // only where the receiving account is held in it.
    const inForeign = which === 'debit' || accountData?.asset === m.amount_asset;
    return el(
      which === 'debit' ? 't_from' : 't_to',
      leaf(`${p}_funds_code`, rentity.lookups.funds[m.type] ?? UNKNOWN),
      inForeign && foreign(m, `${p}_foreign_currency`),
      holder,
      leaf(`${p}_country`, where),
    );
  };

  // The movement in the local currency: as it is, or as normalised at its event time.
  const localAmount = (m: CaseMovementRow): string | undefined => {
    if (m.amount_asset === local) return minorToDecimal(BigInt(m.amount_value), m.amount_scale);
    const n = m.normalized;
    if (n?.status !== 'normalized' || n.amount?.asset !== local) return undefined;
    return minorToDecimal(BigInt(n.amount.value), n.amount.scale);
  };
  const foreign = (m: CaseMovementRow, name: string): XmlNode | undefined => {
    const n = m.normalized;
    if (m.amount_asset === local || n?.status !== 'normalized' || !ISO_CURRENCY.test(m.amount_asset)) return undefined;
    // The rate file's rate says 1 base = rate quote; goAML wants local units per foreign unit.
    const direction = n.fx.base === m.amount_asset ? 'direct' : 'inverse';
    return el(
      name,
      leaf('foreign_currency_code', m.amount_asset),
      leaf('foreign_amount', minorToDecimal(BigInt(m.amount_value), m.amount_scale)),
      leaf('foreign_exchange_rate', localPerForeign(decimalToScaled(n.fx.rate, n.fx.rate_scale), n.fx.rate_scale, direction, RATE_PLACES)),
    );
  };

  const citedBy = new Map<string, string[]>();
  for (const alert of file.alerts) {
    for (const entry of alert.evidence) {
      for (const id of Array.isArray(entry.evidence.movements) ? entry.evidence.movements : []) {
        const list = citedBy.get(id) ?? [];
        if (!list.includes(alert.detector_id)) list.push(alert.detector_id);
        citedBy.set(id, list);
      }
    }
  }

  const transactions: XmlNode[] = [];
  const unpriced: string[] = [];
  // A corrected movement is not a transaction as the institution's ledger holds it: its correction
  // is reported in its place, and the reason names both.
  const corrected = file.movements.filter((m) => m.corrected_by !== null);
  for (const m of file.movements) {
    if (m.corrected_by !== null) continue;
    const amount = localAmount(m);
    if (amount === undefined) {
      unpriced.push(m.external_id);
      continue;
    }
    const tooLong = Array.from(m.external_id).length > 100;
    transactions.push(
      el(
        'transaction',
        leaf('transactionnumber', idWithin(m.external_id, 100)),
        leaf('internal_ref_number', `evt_${m.event_id}`),
        leaf('transaction_location', ''),
        leaf('transaction_description', clip(`${m.type} (${m.status}), cited by ${(citedBy.get(m.external_id) ?? []).join(', ')} in case ${caseRef}`, 8000)),
        leaf('date_transaction', sqlDate(m.occurred_at)),
        leaf('transmode_code', rentity.lookups.transmode[m.type] ?? UNKNOWN),
        leaf('amount_local', amount),
        side(m, 'debit'),
        side(m, 'credit'),
        tooLong && leaf('comments', clip(`movement external id: ${m.external_id}`, 8000)),
      ),
    );
  }

  // A case with no reportable movement reports its subjects as the activity.
  const activity = (): XmlNode => {
    const parties = file.case.subjects.map((s) =>
      s.kind === 'account' ? el('report_party', el('account', account(s.external_id, undefined))) : el('report_party', partyNode((kind) => kind, s.external_id, file.parties.get(s.external_id))),
    );
    return el('activity', el('report_parties', parties.length > 0 ? parties : [el('report_party', el('entity', leaf('name', UNKNOWN)))]));
  };

  const leftOut = [...unpriced, ...file.movementsLeftOut];
  const reason = narrative(file, unpriced, corrected);
  const indicators = [...new Set(file.alerts.map((a) => rentity.lookups.indicators[a.detector_id] ?? UNKNOWN))];
  const document = el(
    'report',
    leaf('rentity_id', rentity.rentity_id),
    leaf('rentity_branch', rentity.rentity_branch),
    leaf('submission_code', 'E'),
    leaf('report_code', 'STR'),
    leaf('entity_reference', caseRef),
    leaf('submission_date', sqlDate(now)),
    leaf('currency_code_local', local),
    el(
      'reporting_person',
      leaf('first_name', rentity.reporting_person.first_name),
      leaf('last_name', rentity.reporting_person.last_name),
      rentity.reporting_person.email !== undefined && leaf('email', rentity.reporting_person.email),
    ),
    el(
      'location',
      leaf('address_type', rentity.location.type),
      leaf('address', rentity.location.address),
      leaf('city', rentity.location.city),
      rentity.location.zip !== undefined && leaf('zip', rentity.location.zip),
      leaf('country_code', rentity.country_code),
    ),
    leaf('reason', clip(reason, 8000)),
    leaf('action', clip(`Case ${caseRef}: case status ${file.case.case_status}, disposition ${file.case.disposition ?? 'none'}.`, 8000)),
    transactions.length > 0 ? transactions : activity(),
    el('report_indicators', (indicators.length > 0 ? indicators : [UNKNOWN]).map((code) => leaf('indicator', code))),
  );
  return { kind: 'report', document, transactions: transactions.length, leftOut };
}

// The reason: the approved report's narrative when there is one, else what the alerts say;
// then the typologies, and the movements that could not be reported as transactions.
function narrative(file: CaseFile, unpriced: readonly string[], corrected: readonly CaseMovementRow[]): string {
  const parts: string[] = [];
  if (file.report) parts.push(file.report.narrative.trim());
  else for (const a of file.alerts) parts.push(`${a.typology} (${a.detector_id}, ${a.severity}): ${a.summary.trim()} ${a.explanation.trim()}`.trim());
  const typologies = [...new Set(file.alerts.map((a) => a.typology))];
  if (typologies.length > 0) parts.push(`Typologies: ${typologies.join('; ')}.`);
  if (unpriced.length > 0) parts.push(`Movements without a rate to ${file.baseAsset} at their time, not reported as transactions: ${unpriced.join(', ')}.`);
  if (corrected.length > 0) parts.push(`Movements corrected since, reported as corrected: ${corrected.map((m) => `${m.external_id} (by ${m.corrected_by})`).join(', ')}.`);
  if (file.movementsLeftOut.length > 0) parts.push(`Further movements cited by the alerts, not in this report: ${file.movementsLeftOut.length}.`);
  return parts.join('\n\n');
}
