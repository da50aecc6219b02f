// The network's flows of one account (GraphStore fanIn / fanOut / gatherScatter), answered from
// the account's own movements with other accounts in its activity snapshot: the same movements as
// the network's transfers (both take completed and pending movements between two accounts, once
// each, at their base value), so the same answer, without a network read. Detection asks for
// fan-in and fan-out on most accounts it evaluates; from the snapshot they cost nothing.
import type { FlowSet } from '../../../platform/graph/port.ts';
import type { AccountMovement } from './context.ts';

type Counterparty = FlowSet['counterparties'][number];

// The flows between `account` and the accounts in `movements` (one direction, one window),
// listed as the graph lists them: largest sum first, then by account id (code-unit order, as the
// database's C collation orders them), at most `limit`, with the totals of all of them.
export function flowSetOf(account: string, movements: readonly AccountMovement[], limit: number): FlowSet {
  const byAccount = new Map<string, Counterparty>();
  let count = 0;
  let sum = 0n;
  for (const movement of movements) {
    // A transfer to itself is no counterparty.
    if (movement.account === account) continue;
    count += 1;
    sum += movement.value ?? 0n;
    const at = movement.occurredAt;
    const seen = byAccount.get(movement.account);
    if (!seen) {
      byAccount.set(movement.account, { account: movement.account, count: 1, sum: movement.value ?? 0n, unpriced: movement.value === null ? 1 : 0, firstAt: at, lastAt: at });
      continue;
    }
    seen.count += 1;
    if (movement.value === null) seen.unpriced += 1;
    else seen.sum += movement.value;
    if (at < seen.firstAt) seen.firstAt = at;
    if (at > seen.lastAt) seen.lastAt = at;
  }
  const ranked = [...byAccount.values()].sort((a, b) => (a.sum === b.sum ? (a.account < b.account ? -1 : a.account > b.account ? 1 : 0) : a.sum > b.sum ? -1 : 1));
  return { account, counterparties: ranked.slice(0, limit), count, sum, truncated: ranked.length > limit };
}
