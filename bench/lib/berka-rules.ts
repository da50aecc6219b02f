// The default ruleset on a real retail book: the Berka accounts (berka.ts) through a fresh
// service with every pipeline, detection included, and the share of each half's accounts that
// the rules alert. The data has no laundering labels, so every alert is counted as one an analyst
// would clear: the share is an upper bound on the rules' false-positive rate on ordinary retail
// accounts. The halves are berka.ts's: a change may be chosen on the chooser half and is judged
// on the other.
import type { Alert } from '../../clients/typescript/src/index.ts';
import { halfOf, type Half } from './berka.ts';

// An alert's subject as a Berka account number (`berka-A<id>`, or its holder `berka-P<id>`).
function berkaAccountOf(alert: Pick<Alert, 'subject'>): number | undefined {
  const match = /^berka-[AP](\d+)$/.exec(alert.subject.external_id);
  return match && (alert.subject.kind === 'account' || alert.subject.kind === 'party') ? Number(match[1]) : undefined;
}

export interface HalfShare {
  half: Half;
  accounts: number;
  alerted: number;
  // Detector → accounts of this half it alerted, and its alerts on them.
  byDetector: Map<string, { accounts: number; alerts: number }>;
}

export function sharesByHalf(accounts: readonly number[], alerts: readonly Alert[]): HalfShare[] {
  return (['chooser', 'judged'] as const).map((half) => {
    const mine = new Set(accounts.filter((a) => halfOf(a) === half));
    const alerted = new Set<number>();
    const byDetector = new Map<string, { accounts: Set<number>; alerts: number }>();
    for (const alert of alerts) {
      const account = berkaAccountOf(alert);
      if (account === undefined || !mine.has(account)) continue;
      alerted.add(account);
      const row = byDetector.get(alert.detector) ?? { accounts: new Set<number>(), alerts: 0 };
      row.accounts.add(account);
      row.alerts += 1;
      byDetector.set(alert.detector, row);
    }
    return {
      half,
      accounts: mine.size,
      alerted: alerted.size,
      byDetector: new Map([...byDetector].sort(([a], [b]) => a.localeCompare(b)).map(([d, r]) => [d, { accounts: r.accounts.size, alerts: r.alerts }])),
    };
  });
}
