// bench/eval-retail: how many ordinary retail accounts a learned model alerts.
//
//   npm run eval:retail                                  the shipped default model
//   npm run eval:retail -- --model-file <file.json> …    also these models (a file as
//                                                        train:default-model writes it, or a bare model document)
//
// The judged half of the Berka accounts (bench/lib/berka.ts: a real Czech retail bank, 1993-1994,
// amounts at a fixed CZK 29 to the dollar; the other half is the one training may use) goes into
// a fresh service through the public API. Each model judges every account by replay, the way
// `npm run eval:model` does (bench/lib/model-replay.ts): at the last payment of each day it was
// active, from the first day whose 90 days the data covers; an account is alerted when any
// evaluation is a hit. The data has no laundering labels: every alert here is taken as false, so
// the figure is the share of a retail book the model would send to analysts. Also printed: the
// features the first hits name as their strongest reason.
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { modelDocumentSchema } from '../services/detection/models/model.ts';
import { DEFAULT_MODEL_ID, saveModel } from '../services/detection/models/store.ts';
import { firstJudgedMs } from './lib/berka.ts';
import { startBerkaWorld } from './lib/berka-world.ts';
import { TENANT } from './lib/bench-service.ts';
import { replayModel } from './lib/model-replay.ts';
import { runBench } from './lib/teardown.ts';

const started = performance.now();
const log = (line: string): void => {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)} s] ${line}\n`);
};

function modelFiles(): string[] {
  const files: string[] = [];
  for (const [i, arg] of process.argv.entries()) if (arg === '--model-file' && process.argv[i + 1]) files.push(process.argv[i + 1]!);
  return files;
}

async function documentOf(file: string) {
  const json = JSON.parse(await readFile(file, 'utf8')) as { model?: unknown };
  return modelDocumentSchema.parse(json.model ?? json);
}

type Reasons = Map<string, number>;
const topReasons = (reasons: Reasons) => [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([f, n]) => `${f} ${n}`).join(', ');

await runBench('eval-retail', log, async (teardown) => {
  const world = await startBerkaWorld(teardown, log, 'judged', firstJudgedMs());
  const judged = new Map([...world.instants].filter(([, at]) => at.length > 0));
  const models: Array<{ id: string; name: string }> = [{ id: DEFAULT_MODEL_ID, name: 'default (shipped)' }];
  for (const file of modelFiles()) models.push({ id: (await saveModel(world.pool, TENANT, await documentOf(file), new Date())).id, name: file });
  const results: string[] = [];
  for (const model of models) {
    const t0 = performance.now();
    const { flagged, firstHits, evaluations } = await replayModel(world.stores, TENANT, model.id, judged);
    const first: Reasons = new Map();
    for (const hit of firstHits.values()) {
      const top = (hit.evidence.facts as { top_features?: Array<{ feature: string }> } | undefined)?.top_features?.[0]?.feature ?? '-';
      first.set(top, (first.get(top) ?? 0) + 1);
    }
    log(`${model.name}: ${evaluations} evaluations in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const share = ((100 * flagged.size) / judged.size).toFixed(1);
    results.push(`RESULT retail ${model.name}: ${flagged.size} of ${judged.size} Berka accounts alerted (${share} %), ${evaluations} evaluations; strongest reason of the first hit: ${topReasons(first) || 'none'}`);
  }
  for (const line of results) console.log(line);
});
