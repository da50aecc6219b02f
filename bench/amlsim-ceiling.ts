// bench/amlsim-ceiling: what an AMLSim data set's labels let any detector reach, from the files
// alone (no service). For the accounts that paid one payee, or were paid by one payer, at least k
// times within one simulation day (k = 3, the default split_transfers rule, and k = 2): how many
// are labelled fraud and how many normal, and the F1 of flagging exactly them. Then the fraud
// accounts with no such repetition, and the F1 reached even if every account touching a payment
// on a fraud account's own fraud step (the label file's fraudStep: its pattern's day) were flagged
// with perfect precision: the ceiling of any detector that judges behaviour.
//
//   npx tsx bench/amlsim-ceiling.ts ../shared/datasets/ibm_amlsim/20K_fanin200
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadDataset } from './lib/amlsim.ts';

interface Label {
  fraud: boolean;
  // The day of the node's laundering payments, -1 when it has none of its own.
  fraudStep: number;
}

async function labels(dir: string): Promise<Map<number, Label>> {
  const out = new Map<number, Label>();
  const lines = (await readFile(join(dir, 'nodes.csv'), 'utf8')).split(/\r?\n/).slice(1);
  for (const line of lines) {
    const [node, fraud, , step] = line.split(',');
    if (node) out.set(Number(node), { fraud: fraud === '1', fraudStep: Number(step ?? -1) });
  }
  return out;
}

const f1 = (tp: number, flagged: number, positives: number): string => {
  const precision = flagged ? tp / flagged : 0;
  const recall = positives ? tp / positives : 0;
  const score = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return `precision ${precision.toFixed(3)} recall ${recall.toFixed(3)} F1 ${score.toFixed(3)}`;
};

async function main(): Promise<void> {
  const arg = process.argv[2];
  if (!arg) throw new Error('usage: npx tsx bench/amlsim-ceiling.ts <AMLSim dataset dir>');
  const dir = resolve(arg);
  const [dataset, label] = await Promise.all([loadDataset(dir, Number.MAX_SAFE_INTEGER), labels(dir)]);
  const positives = [...label.values()].filter((l) => l.fraud).length;

  // Payments per (payer, payee, day).
  const perDay = new Map<string, number>();
  for (const t of dataset.transactions) {
    const key = `${t.source}|${t.target}|${t.step}`;
    perDay.set(key, (perDay.get(key) ?? 0) + 1);
  }
  const repeating = (k: number): Set<number> => {
    const out = new Set<number>();
    for (const [key, n] of perDay) {
      if (n < k) continue;
      const [source, target] = key.split('|').map(Number);
      out.add(source!).add(target!);
    }
    return out;
  };
  const report = (name: string, accounts: Set<number>): void => {
    const tp = [...accounts].filter((n) => label.get(n)?.fraud).length;
    console.log(`${name.padEnd(58)} ${String(tp).padStart(5)} fraud ${String(accounts.size - tp).padStart(5)} normal   flagging them: ${f1(tp, accounts.size, positives)}`);
  };

  console.log(`${dir.split('/').pop()}: ${label.size} accounts, ${positives} labelled fraud, ${dataset.transactions.length} payments`);
  const three = repeating(3);
  const two = repeating(2);
  report('paid one payee, or paid by one payer, >= 3 times a day', three);
  report('the same, >= 2 times a day', two);
  // Every payment on its payer's fraud step, whatever its size or count: the pattern's payments.
  const onFraudStep = new Set<number>();
  for (const t of dataset.transactions) {
    if (label.get(t.source)?.fraudStep === t.step) onFraudStep.add(t.source).add(t.target);
  }
  report('touched a payment on its payer\'s fraud step (label-aided)', onFraudStep);
  const invisible = [...label].filter(([n, l]) => l.fraud && !onFraudStep.has(n)).length;
  console.log(`labelled fraud with no payment on any fraud step, sent or received: ${invisible} (${((invisible / positives) * 100).toFixed(1)} %)`);
}

await main();
