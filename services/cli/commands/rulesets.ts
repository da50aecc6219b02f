import { readJsonFile } from '../files.ts';
import { parseArgs } from 'node:util';
import { systemClock } from '../../../platform/clock.ts';
import { tenantExists } from '../../../platform/tenants/tenants.ts';
import { openDetectionStores } from '../../../platform/engines.ts';
import { DETECTOR_LIBRARY } from '../../detection/library.ts';
import { defaultRulesetDocument } from '../../detection/framework/ruleset.ts';
import { backtest, DEFAULT_MAX_CHANGES, MAX_CHANGES_LIMIT, type BacktestReport } from '../../detection/rulesets/backtest.ts';
import { moneyDefaultsFor } from '../../detection/rulesets/money-defaults.ts';
import {
  activate,
  createCandidate,
  listRulesets,
  rollback,
  shadowReport,
  showRuleset,
  startShadow,
  type Refusal,
  type RulesetSummary,
  type ShadowReport,
} from '../../detection/rulesets/lifecycle.ts';
import { dateTimeMs, isDateTime } from '../../../schemas/primitives/timestamp.ts';
import { UsageError, withContext } from '../context.ts';

type Print = (line: string) => void;

export const RULESETS_USAGE = `usage: svc rulesets create --tenant <tenant_id> --file <ruleset.json> [--json]
       svc rulesets list --tenant <tenant_id> [--json]
       svc rulesets show --tenant <tenant_id> --version <n, 0: the built-in default> [--json]
       svc rulesets backtest --tenant <tenant_id> --version <n> --from <RFC 3339> --to <RFC 3339> [--max-changes <n>] [--json]
       svc rulesets shadow --tenant <tenant_id> --version <n> [--json]
       svc rulesets shadow-report --tenant <tenant_id> --version <n> [--json]
       svc rulesets activate --tenant <tenant_id> --version <n> [--json]
       svc rulesets rollback --tenant <tenant_id> [--json]`;

const ACTIONS = ['create', 'list', 'show', 'backtest', 'shadow', 'shadow-report', 'activate', 'rollback'] as const;
type Action = (typeof ACTIONS)[number];
const NEEDS_VERSION: readonly Action[] = ['show', 'backtest', 'shadow', 'shadow-report', 'activate'];

// The operator's side of the ruleset lifecycle (services/detection/rulesets): readable text by
// default, --json for scripts. Refusals (unknown version, wrong state, a document that does not
// compile) exit 2 with their reasons.
export async function rulesetsCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      file: { type: 'string' },
      version: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'max-changes': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const action = positionals[0] as Action | undefined;
  if (!action || !ACTIONS.includes(action) || positionals.length !== 1) throw new UsageError(RULESETS_USAGE);
  const tenantId = values.tenant;
  if (!tenantId) throw new UsageError(`--tenant is required\n${RULESETS_USAGE}`);
  const version = NEEDS_VERSION.includes(action) ? versionOf(values.version, action === 'show') : undefined;
  const extra = (name: string, allowed: readonly Action[]) => {
    if ((values as Record<string, unknown>)[name] !== undefined && !allowed.includes(action)) throw new UsageError(`--${name} does not apply to ${action}\n${RULESETS_USAGE}`);
  };
  extra('file', ['create']);
  extra('version', NEEDS_VERSION);
  for (const name of ['from', 'to', 'max-changes']) extra(name, ['backtest']);
  const out = (json: unknown, text: () => string[]) => {
    if (values.json) print(JSON.stringify(json, null, 2));
    else for (const line of text()) print(line);
  };

  if (action === 'create') {
    if (!values.file) throw new UsageError(`--file is required\n${RULESETS_USAGE}`);
    const document = await readDocument(values.file);
    return withContext(async ({ db }) => {
      const outcome = await createCandidate(db.pool, tenantId, document, DETECTOR_LIBRARY, new Date());
      if (outcome.kind !== 'done') refuse(outcome);
      out({ version: outcome.version, name: outcome.name, state: 'candidate', left_out: outcome.leftOut }, () => [
        `ruleset ${outcome.version} (${outcome.name}) created as a candidate for ${tenantId}`,
        ...(outcome.leftOut.length > 0
          ? [
              `warning: it does not run ${outcome.leftOut.length} detector(s) the live ruleset runs: ${outcome.leftOut.join(', ')}`,
              `  a ruleset runs only the detectors it names; to change a few, edit the whole live document (svc rulesets show --tenant ${tenantId} --version <live version, or 0 for the built-in default> --json)`,
            ]
          : []),
        `next: svc rulesets backtest --tenant ${tenantId} --version ${outcome.version} --from <…> --to <…>, or shadow / activate it`,
      ]);
    });
  }

  if (action === 'backtest') {
    const from = instantOf('from', values.from);
    const to = instantOf('to', values.to);
    const maxChanges = values['max-changes'] === undefined ? DEFAULT_MAX_CHANGES : Number(values['max-changes']);
    if (!Number.isInteger(maxChanges) || maxChanges < 1 || maxChanges > MAX_CHANGES_LIMIT) throw new UsageError(`--max-changes must be an integer from 1 to ${MAX_CHANGES_LIMIT}`);
    return withContext(async ({ config, db }) => {
      const stores = await openDetectionStores(config, db.pool);
      const outcome = await backtest({ pool: db.pool, ...stores.value, clock: systemClock }, tenantId, version!, { from, to, maxChanges }, DETECTOR_LIBRARY).finally(() => stores.close());
      if (outcome.kind === 'too_large') throw new UsageError(`${outcome.message} (--max-changes ${outcome.cap} now)`);
      if (outcome.kind !== 'done') refuse(outcome);
      out(outcome.report, () => backtestText(version!, outcome.report));
    });
  }

  await withContext(async ({ db }) => {
    const now = new Date();
    switch (action) {
      case 'list': {
        const outcome = await listRulesets(db.pool, tenantId);
        if (outcome.kind !== 'done') refuse(outcome);
        return out(outcome.rulesets.map(summaryJson), () => listText(tenantId, outcome.rulesets));
      }
      case 'show': {
        if (version === 0) {
          // The built-in default (what runs while no ruleset is active): a document to start from,
          // its money in the tenant's base asset as the detectors run it (decision 0081).
          if (!(await tenantExists(db.pool, tenantId))) refuse({ kind: 'not_found', message: `no tenant ${tenantId}` });
          const document = defaultRulesetDocument(DETECTOR_LIBRARY, await moneyDefaultsFor(db.pool, tenantId, now));
          return out({ version: 0, name: document.name, state: 'built-in', document }, () => [
            'ruleset 0 (default): built-in, what runs while no ruleset is active',
            'document:',
            ...JSON.stringify(document, null, 2).split('\n').map((line) => `  ${line}`),
          ]);
        }
        const outcome = await showRuleset(db.pool, tenantId, version!);
        if (outcome.kind !== 'done') refuse(outcome);
        const r = outcome.ruleset;
        const json = { version: r.version, name: r.name, state: r.state, created_at: r.createdAt.toISOString(), activated_at: r.activatedAt?.toISOString() ?? null };
        return out({ ...json, document: r.document, backtest: r.backtest }, () => [
          `ruleset ${r.version} (${r.name}): ${r.state}`,
          `created ${r.createdAt.toISOString()}${r.activatedAt ? `, last activated ${r.activatedAt.toISOString()}` : ''}`,
          'document:',
          ...JSON.stringify(r.document, null, 2).split('\n').map((line) => `  ${line}`),
          ...(r.backtest ? backtestText(r.version, r.backtest) : ['not backtested']),
        ]);
      }
      case 'shadow': {
        const outcome = await startShadow(db.pool, tenantId, version!, DETECTOR_LIBRARY, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out({ version: outcome.version, previous_shadow: outcome.previousShadow }, () => [
          `ruleset ${outcome.version} is in shadow for ${tenantId}${outcome.previousShadow !== null ? ` (ruleset ${outcome.previousShadow} went back to candidate)` : ''}`,
          'detection workers pick it up within 5 s; its alerts are recorded in shadow and never published',
        ]);
      }
      case 'shadow-report': {
        const outcome = await shadowReport(db.pool, tenantId, version!, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out(outcome.report, () => shadowText(outcome.report));
      }
      case 'activate': {
        const outcome = await activate(db.pool, tenantId, version!, DETECTOR_LIBRARY, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out({ version: outcome.version, previous_version: outcome.previousVersion }, () => [
          `ruleset ${outcome.version} is active for ${tenantId}, replacing ${outcome.previousVersion === 0 ? 'the built-in default (0)' : `ruleset ${outcome.previousVersion} (now retired)`}`,
          'detection workers pick it up within 5 s',
        ]);
      }
      case 'rollback': {
        const outcome = await rollback(db.pool, tenantId, DETECTOR_LIBRARY, now);
        if (outcome.kind !== 'done') refuse(outcome);
        return out({ from_version: outcome.fromVersion, to_version: outcome.toVersion }, () => [
          `ruleset ${outcome.fromVersion} rolled back for ${tenantId}; ${outcome.toVersion === 0 ? 'the built-in default (0) runs live' : `ruleset ${outcome.toVersion} is active again`}`,
          'detection workers pick it up within 5 s',
        ]);
      }
    }
  });
}

// JSON output is snake_case, like the service's other documents (and the reports).
function summaryJson(r: RulesetSummary) {
  return {
    version: r.version,
    name: r.name,
    state: r.state,
    created_at: r.createdAt.toISOString(),
    activated_at: r.activatedAt?.toISOString() ?? null,
    backtested: r.backtested
      ? { from: r.backtested.from, to: r.backtested.to, candidate_alerts: r.backtested.candidateAlerts, active_alerts: r.backtested.activeAlerts, ran_at: r.backtested.ranAt }
      : null,
  };
}

// 0 names the built-in default, which only `show` takes.
function versionOf(text: string | undefined, builtIn = false): number {
  const version = Number(text);
  const lowest = builtIn ? 0 : 1;
  if (text === undefined || !/^\d+$/.test(text) || !Number.isSafeInteger(version) || version < lowest) {
    throw new UsageError(`--version must be a ruleset version (${builtIn ? '0 for the built-in default, ' : ''}1, 2, …)\n${RULESETS_USAGE}`);
  }
  return version;
}

function instantOf(name: string, text: string | undefined): Date {
  if (text === undefined) throw new UsageError(`--${name} is required\n${RULESETS_USAGE}`);
  if (!isDateTime(text)) throw new UsageError(`--${name} must be an RFC 3339 date-time with an offset or Z (e.g. 2026-08-01T00:00:00Z)`);
  return new Date(dateTimeMs(text));
}

async function readDocument(file: string): Promise<unknown> {
  return readJsonFile(file);
}

// A lifecycle refusal as the CLI prints it (svc rulesets, svc models): the issues under the
// message when there are any; one without issues (a model already live, another base asset) is
// its message alone, not one ending in a colon and an empty line.
export function refuse(refusal: Refusal): never {
  if (refusal.kind === 'invalid' && refusal.issues.length > 0) {
    throw new UsageError(`${refusal.message}:\n${refusal.issues.map((i) => `  ${i.path || '(document)'}: ${i.message}`).join('\n')}`);
  }
  throw new UsageError(refusal.message);
}

function listText(tenantId: string, rulesets: RulesetSummary[]): string[] {
  const active = rulesets.find((r) => r.state === 'active');
  const lines = [active ? `live for ${tenantId}: ruleset ${active.version} (${active.name})` : `live for ${tenantId}: the built-in default (0)`];
  if (rulesets.length === 0) return [...lines, 'no stored rulesets'];
  for (const r of rulesets) {
    const backtested = r.backtested ? `backtested ${r.backtested.from}..${r.backtested.to}: ${r.backtested.candidateAlerts} alerts vs ${r.backtested.activeAlerts}` : 'not backtested';
    lines.push(`  ${String(r.version).padStart(4)}  ${r.state.padEnd(11)}  ${r.name}  (created ${r.createdAt.toISOString()}; ${backtested})`);
  }
  return lines;
}

function backtestText(version: number, report: BacktestReport): string[] {
  const against = report.active_version === 0 ? 'the built-in default (0)' : `active ruleset ${report.active_version}`;
  const t = report.totals;
  const lines = [
    `backtest of ruleset ${version} against ${against}, event time ${report.window.from} .. ${report.window.to} (ran ${report.ran_at})`,
    `replayed ${t.movements} movements and ${t.control_events} control events; ${t.subjects_evaluated} subjects, ${t.evaluations} detector evaluations`,
    `alerts it would have opened: ${t.candidate_alerts} (the live ruleset: ${t.active_alerts})`,
    `  ${'detector'.padEnd(36)} ${'candidate'.padStart(9)} ${'live'.padStart(9)}   non-results of the candidate: insufficient_data/stale/not_applicable`,
  ];
  // Stored as jsonb, whose key order is not the report's.
  for (const [id, d] of Object.entries(report.detectors).sort(([a], [b]) => a.localeCompare(b))) {
    const n = d.non_results.candidate;
    const count = (value: number | null) => (value === null ? '-' : String(value)).padStart(9);
    lines.push(`  ${id.padEnd(36)} ${count(d.candidate_alerts)} ${count(d.active_alerts)}   ${n ? `${n.insufficient_data}/${n.stale}/${n.not_applicable}` : '-'}`);
  }
  lines.push("  ('-': the ruleset does not run this detector)");
  return lines;
}

function shadowText(report: ShadowReport): string[] {
  const basis = report.period.basis === 'first_shadow_alert' ? 'from its first shadow alert' : 'from its creation (no shadow alert yet)';
  const lines = [
    `ruleset ${report.version} (${report.state}) in shadow, ${basis}: ${report.period.from} .. ${report.period.to} (alert creation time)`,
    `alerts opened: ${report.totals.shadow_alerts} in shadow, ${report.totals.live_alerts} live`,
    `  ${'detector'.padEnd(36)} ${'shadow'.padStart(9)} ${'live'.padStart(9)}   subjects (shadow/live)`,
  ];
  for (const d of report.detectors) {
    const name = d.model === undefined ? d.detector : `${d.detector} (model ${d.model})`;
    lines.push(`  ${name.padEnd(36)} ${String(d.shadow_alerts).padStart(9)} ${String(d.live_alerts).padStart(9)}   ${d.shadow_subjects}/${d.live_subjects}`);
  }
  if (report.detectors.length === 0) lines.push('  no alerts in this period');
  return lines;
}
