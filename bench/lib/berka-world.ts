// One half of the Berka accounts (berka.ts) taken in by a fresh service, with the instants a
// detector would judge each account at. Used by the retail measure (eval-retail.ts) and, for the
// other half, by the default model's training script (train-default-model.ts).
import { resolve } from 'node:path';
import type { DetectionStores } from '../../services/detection/framework/context.ts';
import { accountItem, dailyInstants, halfOf, loadBerka, movementItem, partyItem, type Half } from './berka.ts';
import { ROOT, type BenchService } from './bench-service.ts';
import { startIngestedWorld } from './ingested-world.ts';
import type { Log, Teardown } from './teardown.ts';

export const BERKA_DIR = resolve(ROOT, '..', 'shared', 'datasets', 'berka_pkdd99');

export interface BerkaWorld {
  name: string;
  service: BenchService;
  stores: DetectionStores;
  pool: import('pg').Pool;
  // Account external id → the last payment of each day it had one, from `fromMs` on.
  instants: Map<string, Date[]>;
  accounts: number;
  movements: number;
}

// fromMs: the first instant of interest (firstJudgedMs() to judge; 0 for every day of the data).
export async function startBerkaWorld(teardown: Teardown, log: Log, half: Half, fromMs: number): Promise<BerkaWorld> {
  const data = await loadBerka(BERKA_DIR, (id) => halfOf(id) === half);
  const name = `berka-${half}`;
  log(`${name}: ${data.accounts.length} accounts, ${data.payments.length} payments (${data.bankPostings} bank postings left out, ${data.rejected} incomplete rows)`);
  const entities = data.accounts.flatMap((a) => [partyItem(a), accountItem(a)]);
  const { service, pool, stores } = await startIngestedWorld(teardown, log, name, entities, data.payments.map(movementItem));
  return { name, service, pool, stores, instants: dailyInstants(data.payments, fromMs), accounts: data.accounts.length, movements: data.payments.length };
}
