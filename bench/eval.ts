// bench/eval: detection quality on a labelled data set, end to end through the public API.
//
//   npm run eval -- <dataset dir>     for example ../shared/datasets/ibm_amlsim/20K_fanin200,
//                                     ../shared/datasets/ibm_amlsim/20K_cycle200 or
//                                     ../shared/datasets/ibm_aml_hi_small or ../shared/datasets/berka_pkdd99
//
// A fresh service (`svc run api` on its own embedded PostgreSQL) with the four pipelines as
// processes of their own (canonical, graph, aggregates, detect) and the built-in default ruleset
// (no tuning per data set). Entities, then movements in event-time order, go in through signed
// POST /v1/batches; once every consumer group has drained, alerts and episodes are read back
// through GET /v1/alerts and GET /v1/episodes with a compliance key, and scored against the labels:
//   - AMLSim (nodes.csv with isFraud): an account counts as flagged when it, or its party, is the
//     subject of an alert or a member of an episode. Precision, recall and F1 over accounts.
//   - AMLworld HI-Small (patterns file + sample): per typology, the share of laundering attempts
//     with at least one alert on an involved account (or its party); transaction-level precision:
//     the share of movements cited as evidence by alerts that are labelled laundering.
//   - Berka (../shared/datasets/berka_pkdd99, a real retail bank, no labels): the share of each
//     half's accounts the rules alert, per detector (bench/lib/berka-rules.ts). Every alert there
//     is taken as one an analyst would clear.
// BENCH_MOVEMENTS keeps only the first movements (in time) for a quick check. EVAL_DUMP=<file>
// writes the run's alerts (and, for AMLSim, episodes) there as JSON, for analysis. EVAL_MODEL=<id>
// (AMLworld only, refused for AMLSim; e.g. default) runs that learned model live beside the
// default ruleset's detectors, and each detector's alerts and cited movements are printed. Not a
// timed test.
//
//   npm run eval -- --cross [<AMLSim dir> <AMLSim dir>]   (default: the two AMLSim dev sets)
//
// Cross-dataset, rules only: every tuned parameter of the default ruleset (bench/lib/tuning.ts) is
// chosen on one set and judged on the other, in both directions. Each set runs once, end to end,
// under the default ruleset with the tuned parameters at their loosest values, activated through
// `svc rulesets create/activate`; every alert's evidence history is read back, and what each
// combination of values would have flagged is told from the thresholds each hit crossed. The
// chooser picks the combination of the best F1 among those at precision >= 0.9 (the best F1
// overall when none is), on its own set only; the judge's figures are the other set's under it.
// Flagged accounts are the alerts' subjects (an episode's members are its alerts' subjects and
// their holders, the same AMLSim nodes).
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { AGGREGATES, CANONICAL, DETECT, GRAPH } from '../pipelines/groups.ts';
import { PostgresLogBus } from '../platform/bus/postgres-log.ts';
import { accountItem, loadDataset, movementItem, partyItem } from './lib/amlsim.ts';
import * as berka from './lib/berka.ts';
import { sharesByHalf } from './lib/berka-rules.ts';
import type { Alert } from '../clients/typescript/src/index.ts';
import type { Episode } from '../clients/typescript/src/generated/api-types.ts';
import { benchClient } from './lib/api.ts';
import { loadWorld, usdRateFile, worldAccountItem, worldMovementItem, worldPartyItem } from './lib/amlworld.ts';
import { batchesOf, ingestBatches, startPipeline } from './lib/batches.ts';
import { issueBenchKey, startService, svc, TENANT, type BenchService } from './lib/bench-service.ts';
import { embeddedConnection } from './lib/embedded-pg.ts';
import { positiveInteger } from './lib/options.ts';
import { runBench, Teardown } from './lib/teardown.ts';
import { choices, describeChoice, raisedUnder, shippedChoice, sweepRuleset, type Choice, type RecordedHit } from './lib/tuning.ts';
import type { RulesetDocument } from '../services/detection/framework/ruleset.ts';

const MOVEMENT_LIMIT = positiveInteger('BENCH_MOVEMENTS', Number.MAX_SAFE_INTEGER);
const DRAIN_TIMEOUT_MS = positiveInteger('BENCH_DRAIN_TIMEOUT_S', 3600) * 1000;
const BATCH_SIZE = 1000;

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s] ${line}\n`);
};

async function send(service: BenchService, items: string[]): Promise<void> {
  // Two connections: on a loaded machine four batches at once can outlast the load driver's 10 s.
  await ingestBatches(service, 2, batchesOf(items, BATCH_SIZE));
}

// Every item of a list, across its pages (the SDK follows the cursors).
async function readAll<T>(list: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of list) out.push(item);
  return out;
}

// The movements an alert cites (every detector's evidence lists them).
const citedMovements = (alert: Alert): string[] => alert.evidence.movements as string[];

async function drained(bus: PostgresLogBus): Promise<void> {
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  let lastLog = 0;
  for (;;) {
    // Exact counts only for the progress line: counting a long backlog costs the run itself.
    const logging = performance.now() - lastLog > 15_000;
    let behind = 0;
    const per: string[] = [];
    for (const spec of [CANONICAL, GRAPH, AGGREGATES, DETECT]) {
      const n = (await bus.lag(spec.group, spec.topics, logging ? {} : { upTo: 1 })).reduce((sum, p) => sum + p.records, 0);
      behind += n;
      per.push(`${spec.group} ${n}`);
    }
    if (behind === 0) return;
    if (performance.now() > deadline) throw new Error(`pipelines still behind: ${per.join(', ')}`);
    if (logging) {
      log(`waiting: ${per.join(', ')} records behind`);
      lastLog = performance.now();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

const hasFile = (dir: string, file: string): Promise<boolean> => readFile(join(dir, file)).then(() => true, () => false);
const isAmlsimDir = (dir: string): Promise<boolean> => hasFile(dir, 'nodes.csv');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  // AMLSim sets judge the model through eval:model (trained per set); here it would be ignored.
  if (process.env.EVAL_MODEL && (args[0] === '--cross' || (args[0] && (await isAmlsimDir(resolve(args[0])))))) {
    throw new Error('EVAL_MODEL applies to AMLworld sets; for AMLSim sets, npm run eval:model judges the learned model');
  }
  if (args[0] === '--cross') return crossDataset(args.slice(1));
  const arg = args[0];
  if (!arg) throw new Error('usage: npm run eval -- <dataset dir> | --cross [<AMLSim dir> <AMLSim dir>]');
  const dir = resolve(arg);
  const isAmlsim = await isAmlsimDir(dir);
  const isBerka = await hasFile(dir, 'trans.asc');
  if (isBerka && process.env.EVAL_MODEL) throw new Error('EVAL_MODEL applies to AMLworld sets; for Berka, npm run eval:retail judges the learned model');

  await runBench('eval', log, async (teardown) => {
    if (isAmlsim) {
      await reportAmlsim(dir, await runAmlsim(teardown, dir, {}));
      return;
    }
    const service = await startService(teardown, log, { name: 'api' });
    const compliance = await issueBenchKey(service.env, 'compliance');
    // EVAL_MODEL=<id> (e.g. default): the learned model live beside the default ruleset's detectors.
    if (process.env.EVAL_MODEL) log((await svc(service.env, ['models', 'activate', '--tenant', TENANT, '--model', process.env.EVAL_MODEL])).trim());
    const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 2 });
    const bus = new PostgresLogBus(pool);
    try {
      for (const name of ['canonical', 'graph', 'aggregates', 'detect'] as const) await startPipeline(teardown, service, name, name);
      if (isBerka) await evalBerka(service, compliance, bus, dir);
      else await evalAmlworld(service, compliance, bus, dir);
    } finally {
      await pool.end();
    }
  });
}

// An AMLSim node from an alert's subject or an episode's member (`amlsim-A<N>`, `amlsim-P<N>`).
const nodeOf = (kind: string, id: string): number | undefined => {
  const match = /^amlsim-[AP](\d+)$/.exec(id);
  return match && (kind === 'account' || kind === 'party') ? Number(match[1]) : undefined;
};

interface AmlsimRun {
  labels: Map<number, boolean>;
  alerts: Alert[];
  episodes: Episode[];
  // Every hit of every alert, with the alert's subject (only when asked: one read per alert).
  hits: Array<RecordedHit & { node: number }>;
}

// One AMLSim set through a fresh service and its pipelines, under the built-in default ruleset or
// `ruleset` (created and activated before the first entity goes in).
async function runAmlsim(teardown: Teardown, dir: string, options: { ruleset?: RulesetDocument; hits?: boolean }): Promise<AmlsimRun> {
  const service = await startService(teardown, log, { name: 'api' });
  const key = await issueBenchKey(service.env, 'compliance');
  const pool = new pg.Pool({ ...(await embeddedConnection(service.dataDir)), max: 2 });
  const bus = new PostgresLogBus(pool);
  try {
    for (const name of ['canonical', 'graph', 'aggregates', 'detect'] as const) await startPipeline(teardown, service, name, name);
    if (options.ruleset) {
      const file = join(service.dataDir, 'ruleset.json');
      await writeFile(file, JSON.stringify(options.ruleset));
      const created = JSON.parse(await svc(service.env, ['rulesets', 'create', '--tenant', TENANT, '--file', file, '--json'])) as { version: number };
      await svc(service.env, ['rulesets', 'activate', '--tenant', TENANT, '--version', String(created.version)]);
      log(`ruleset ${created.version} (${options.ruleset.name}) active`);
    }
    const dataset = await loadDataset(dir, MOVEMENT_LIMIT);
    const labels = new Map<number, boolean>();
    const nodesText = await readFile(join(dir, 'nodes.csv'), 'utf8');
    for (const line of nodesText.split(/\r?\n/).slice(1)) {
      const [node, fraud] = line.split(',');
      if (node) labels.set(Number(node), fraud === '1');
    }
    log(`AMLSim ${dir}: ${dataset.nodes.length} accounts, ${dataset.transactions.length} movements`);
    await send(service, dataset.nodes.flatMap((n) => [partyItem(n), accountItem(n)]));
    await drained(bus);
    const t0 = performance.now();
    await send(service, dataset.transactions.map(movementItem));
    log(`movements accepted in ${((performance.now() - t0) / 1000).toFixed(1)} s; waiting for detection`);
    await drained(bus);
    log(`detection complete ${((performance.now() - t0) / 1000).toFixed(1)} s after the first movement`);

    const compliance = benchClient(service, key);
    const alerts = await readAll(compliance.alerts.list({ limit: 200 }));
    const episodes = await readAll(compliance.episodes.list({ limit: 200 }));
    const hits: AmlsimRun['hits'] = [];
    if (options.hits) {
      for (const alert of alerts) {
        const node = nodeOf(alert.subject.kind, alert.subject.external_id);
        if (node === undefined) continue;
        const detail = await compliance.alerts.retrieve(alert.alert_id);
        for (const entry of detail.evidence_history) hits.push({ node, detector: alert.detector, evidence: entry.evidence as unknown as RecordedHit['evidence'] });
      }
    }
    return { labels, alerts, episodes, hits };
  } finally {
    await pool.end();
  }
}

interface Score {
  flagged: number;
  tp: number;
  positives: number;
  precision: number;
  recall: number;
  f1: number;
}

function scoreOf(flagged: Set<number>, labels: Map<number, boolean>): Score {
  const positives = [...labels.values()].filter(Boolean).length;
  const tp = [...flagged].filter((n) => labels.get(n)).length;
  const precision = flagged.size ? tp / flagged.size : 0;
  const recall = positives ? tp / positives : 0;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return { flagged: flagged.size, tp, positives, precision, recall, f1 };
}

const scoreText = (s: Score) =>
  `precision ${s.precision.toFixed(3)} recall ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)} (${s.flagged} flagged, ${s.tp} of ${s.positives} fraud)`;

async function reportAmlsim(dir: string, run: AmlsimRun): Promise<void> {
  const { labels, alerts, episodes } = run;
  const flagged = new Set<number>();
  for (const a of alerts) {
    const n = nodeOf(a.subject.kind, a.subject.external_id);
    if (n !== undefined) flagged.add(n);
  }
  for (const e of episodes) for (const m of e.members) {
    const n = nodeOf(m.kind, m.external_id);
    if (n !== undefined) flagged.add(n);
  }
  const fraud = [...labels.values()].filter(Boolean).length;
  // Where precision goes: the subjects each detector alerts on, and what episode membership adds.
  const bySubject = new Map<string, Set<number>>();
  for (const a of alerts) {
    const n = nodeOf(a.subject.kind, a.subject.external_id);
    if (n === undefined) continue;
    bySubject.set(a.detector, (bySubject.get(a.detector) ?? new Set()).add(n));
  }
  for (const [detector, nodes] of [...bySubject].sort()) {
    const hits = [...nodes].filter((n) => labels.get(n)).length;
    console.log(`  ${detector.padEnd(28)} ${String(nodes.size).padStart(5)} accounts alerted, ${pct(hits / nodes.size)} labelled fraud`);
  }
  const subjects = new Set([...bySubject.values()].flatMap((nodes) => [...nodes]));
  const subjectTp = [...subjects].filter((n) => labels.get(n)).length;
  console.log(`  alert subjects alone: ${subjects.size} accounts, precision ${(subjectTp / Math.max(1, subjects.size)).toFixed(3)}, recall ${(subjectTp / Math.max(1, fraud)).toFixed(3)}`);
  if (process.env.EVAL_DUMP) await writeFile(process.env.EVAL_DUMP, JSON.stringify({ alerts, episodes }));
  const score = scoreOf(flagged, labels);
  const byDetector = new Map<string, number>();
  for (const a of alerts) byDetector.set(a.detector, (byDetector.get(a.detector) ?? 0) + 1);
  console.log(`alerts ${alerts.length} (${[...byDetector].map(([d, n]) => `${d} ${n}`).join(', ')}), episodes ${episodes.length}`);
  console.log(`accounts flagged ${flagged.size}, labelled fraud ${fraud}, true positives ${score.tp}`);
  console.log(`RESULT ${dir.split('/').pop()}: precision ${score.precision.toFixed(3)} recall ${score.recall.toFixed(3)} F1 ${score.f1.toFixed(3)} (target F1 >= 0.8)`);
}

// The precision an analyst's queue needs; a choice below it is taken only when none reaches it.
const MIN_PRECISION = 0.9;

async function crossDataset(args: string[]): Promise<void> {
  const defaults = ['20K_fanin200', '20K_cycle200'].map((d) => join('..', 'shared', 'datasets', 'ibm_amlsim', d));
  const dirs = (args.length > 0 ? args : defaults).map((d) => resolve(d));
  if (dirs.length !== 2) throw new Error('usage: npm run eval -- --cross [<AMLSim dir> <AMLSim dir>]');
  const name = (dir: string) => dir.split('/').pop()!;
  const runs = new Map<string, AmlsimRun>();
  await runBench('eval', log, async (outer) => {
    for (const dir of dirs) {
      // A fresh service per set, stopped before the next starts (and on Ctrl-C by the outer one).
      const teardown = new Teardown(log);
      outer.closers.push(() => teardown.run());
      const run = await runAmlsim(teardown, dir, { ruleset: sweepRuleset(), hits: true });
      runs.set(dir, run);
      await teardown.run();
      log(`${name(dir)}: ${run.alerts.length} alerts, ${run.hits.length} hits read back`);
    }
  });
  if (runs.size !== 2) return;
  const candidates = choices();
  const flaggedUnder = (run: AmlsimRun, choice: Choice) => new Set(run.hits.filter((hit) => raisedUnder(hit, choice)).map((hit) => hit.node));
  const table = new Map<string, Map<Choice, Score>>();
  for (const [dir, run] of runs) table.set(dir, new Map(candidates.map((choice) => [choice, scoreOf(flaggedUnder(run, choice), run.labels)])));
  if (process.env.EVAL_DUMP) {
    const rows = [...table].map(([dir, scores]) => [name(dir), [...scores].map(([choice, score]) => ({ choice: describeChoice(choice), ...score }))]);
    await writeFile(process.env.EVAL_DUMP, JSON.stringify({ scores: Object.fromEntries(rows), hits: Object.fromEntries([...runs].map(([dir, run]) => [name(dir), run.hits])) }));
  }
  const shipped = shippedChoice();
  const isShipped = (choice: Choice) => [...choice].every(([tuned, value]) => shipped.get(tuned) === value);
  for (const [chooser, judge] of [dirs, [...dirs].reverse()] as Array<[string, string]>) {
    const scores = table.get(chooser)!;
    const eligible = candidates.filter((c) => scores.get(c)!.precision >= MIN_PRECISION);
    // Best F1 on the chooser alone; on a tie, the first in the grid (the looser values).
    const chosen = (eligible.length > 0 ? eligible : candidates).reduce((best, c) => (scores.get(c)!.f1 > scores.get(best)!.f1 ? c : best));
    console.log(`chosen on ${name(chooser)}: ${describeChoice(chosen)}${isShipped(chosen) ? ' (the shipped defaults)' : ''}`);
    console.log(`  on ${name(chooser)} (chooser): ${scoreText(scores.get(chosen)!)}`);
    console.log(`RESULT cross: chosen on ${name(chooser)}, judged on ${name(judge)}: ${scoreText(table.get(judge)!.get(chosen)!)} (target F1 >= 0.8, precision >= ${MIN_PRECISION})`);
  }
  for (const dir of dirs) {
    const score = [...table.get(dir)!].find(([choice]) => isShipped(choice))?.[1];
    if (score) console.log(`shipped defaults (${describeChoice(shipped)}) on ${name(dir)}: ${scoreText(score)}`);
  }
}

async function evalBerka(service: BenchService, key: { key_id: string; secret: string }, bus: PostgresLogBus, dir: string): Promise<void> {
  const data = await berka.loadBerka(dir, () => true);
  const payments = data.payments.slice(0, MOVEMENT_LIMIT);
  log(`Berka ${dir}: ${data.accounts.length} accounts, ${payments.length} payments (${data.bankPostings} bank postings left out)`);
  await send(service, data.accounts.flatMap((a) => [berka.partyItem(a), berka.accountItem(a)]));
  await drained(bus);
  const t0 = performance.now();
  await send(service, payments.map(berka.movementItem));
  log(`movements accepted in ${((performance.now() - t0) / 1000).toFixed(1)} s; waiting for detection`);
  await drained(bus);
  log(`detection complete ${((performance.now() - t0) / 1000).toFixed(1)} s after the first movement`);

  const alerts = await readAll(benchClient(service, key).alerts.list({ limit: 200 }));
  if (process.env.EVAL_DUMP) await writeFile(process.env.EVAL_DUMP, JSON.stringify({ alerts }));
  for (const share of sharesByHalf(data.accounts.map((a) => a.id), alerts)) {
    console.log(`${share.half} half: ${share.alerted} of ${share.accounts} accounts alerted (${pct(share.alerted / share.accounts)})`);
    for (const [detector, row] of share.byDetector) {
      console.log(`  ${detector.padEnd(28)} ${String(row.accounts).padStart(5)} accounts, ${String(row.alerts).padStart(5)} alerts`);
    }
    if (share.half === 'judged') console.log(`RESULT berka (judged half): ${pct(share.alerted / share.accounts)} of ${share.accounts} ordinary retail accounts alerted by the default ruleset`);
  }
}

async function evalAmlworld(service: BenchService, key: { key_id: string; secret: string }, bus: PostgresLogBus, dir: string): Promise<void> {
  const world = await loadWorld(dir);
  const transactions = world.transactions.slice(0, MOVEMENT_LIMIT);
  log(`AMLworld ${dir}: ${world.accounts.length} accounts, ${transactions.length} movements, ${world.attempts.length} attempts`);
  await svc(service.env, ['assets', 'add', 'X-BTC', '--tenant', TENANT, '--scale', '8']);
  const rates = join(service.dataDir, 'usd-rates.csv');
  await writeFile(rates, usdRateFile(world));
  log(`USD per unit: ${[...world.usdRates].map(([asset, r]) => `${asset} ${r.rate}${r.from === 'data' ? '' : ' (approximate)'}`).join(', ')}`);
  await svc(service.env, ['fx-rates', 'load', rates]);
  await send(service, world.accounts.flatMap((a) => [worldPartyItem(a), worldAccountItem(a)]));
  await drained(bus);
  const t0 = performance.now();
  await send(service, transactions.map(worldMovementItem));
  log(`movements accepted in ${((performance.now() - t0) / 1000).toFixed(1)} s; waiting for detection`);
  await drained(bus);
  log(`detection complete ${((performance.now() - t0) / 1000).toFixed(1)} s after the first movement`);

  const alerts = await readAll(benchClient(service, key).alerts.list({ limit: 200 }));
  if (process.env.EVAL_DUMP) await writeFile(process.env.EVAL_DUMP, JSON.stringify({ alerts }));
  const alertedAccounts = new Set<string>();
  for (const a of alerts) {
    if (a.subject.kind === 'account') alertedAccounts.add(a.subject.external_id);
    if (a.subject.kind === 'party') alertedAccounts.add(a.subject.external_id.replace(/^hi-P/, 'hi-A'));
  }
  const byTypology = new Map<string, { attempts: number; alerted: number }>();
  for (const attempt of world.attempts) {
    const row = byTypology.get(attempt.typology) ?? { attempts: 0, alerted: 0 };
    row.attempts += 1;
    if ([...attempt.accounts].some((a) => alertedAccounts.has(a))) row.alerted += 1;
    byTypology.set(attempt.typology, row);
  }
  const laundering = new Set(world.transactions.filter((t) => t.laundering).map((t) => t.id));
  const cited = new Set(alerts.flatMap(citedMovements));
  const citedLaundering = [...cited].filter((m) => laundering.has(m)).length;
  const byDetector = new Map<string, { alerts: number; cited: Set<string> }>();
  for (const a of alerts) {
    const row = byDetector.get(a.detector) ?? { alerts: 0, cited: new Set<string>() };
    row.alerts += 1;
    for (const m of citedMovements(a)) row.cited.add(m);
    byDetector.set(a.detector, row);
  }
  console.log(`alerts ${alerts.length}; per detector: alerts, movements cited, of them laundering`);
  for (const [detector, row] of [...byDetector].sort()) {
    const hits = [...row.cited].filter((m) => laundering.has(m)).length;
    console.log(`  ${detector.padEnd(28)} ${String(row.alerts).padStart(5)} ${String(row.cited.size).padStart(6)}  ${pct(row.cited.size ? hits / row.cited.size : 0)}`);
  }
  let attempts = 0;
  let alerted = 0;
  for (const [typology, row] of [...byTypology].sort()) {
    attempts += row.attempts;
    alerted += row.alerted;
    console.log(`  ${typology.padEnd(15)} ${String(row.alerted).padStart(3)} / ${String(row.attempts).padStart(3)} attempts alerted (${pct(row.alerted / row.attempts)})`);
  }
  console.log(`transaction-level precision: ${citedLaundering} of ${cited.size} movements cited as evidence are laundering (${pct(cited.size ? citedLaundering / cited.size : 0)})`);
  console.log(`RESULT ibm_aml_hi_small: ${pct(alerted / attempts)} of ${attempts} attempts alerted (target >= 90%), transaction precision ${pct(cited.size ? citedLaundering / cited.size : 0)} (target >= 50%)`);
}

await main();
