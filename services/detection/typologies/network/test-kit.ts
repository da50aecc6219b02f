// Builders the network detectors' tests share: holders with accounts, times, and a context whose
// graph reads were cut short (a store cannot be made to run out of time on demand).
import type { DetectionWorld } from '../../../../test/support/detection-world.ts';
import type { SubjectContext } from '../../framework/context.ts';

const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

// An instant `hours` before `at`.
export const before = (at: string, hours: number) => new Date(Date.parse(at) - hours * HOUR).toISOString();

// One party holding one account per id: account `<id>`, party `<id>-p`.
export async function holders(
  world: DetectionWorld,
  ids: readonly string[],
  options: { party?: Record<string, unknown>; account?: Record<string, unknown> } = {},
): Promise<void> {
  await Promise.all(
    ids.map(async (id) => {
      await world.party(`${id}-p`, options.party ?? {});
      await world.account(id, `${id}-p`, options.account ?? {});
    }),
  );
}

export const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

// The [account, party] side of a movement for an account made by `holders`.
export const side = (account: string): [string, string] => [account, `${account}-p`];

// A context for one account whose every graph read came back cut short with nothing in it
// (`overrides`: reads that answered something, or other members of the context).
export function cutShortContext(account: string, at: string, overrides: Record<string, unknown> = {}): SubjectContext {
  const empty = { account, counterparties: [], count: 0, sum: 0n, truncated: true };
  return {
    tenantId: 't',
    baseAsset: 'USD',
    subject: { kind: 'account', id: account },
    at: new Date(at),
    trigger: null,
    fanIn: async () => empty,
    fanOut: async () => empty,
    cycles: async () => ({ cycles: [], truncated: true }),
    scatterGather: async () => ({ source: account, gathers: [], truncated: true }),
    gatherScatter: async () => ({ hub: account, sources: [], targets: [], inSum: 0n, outSum: 0n, truncated: true }),
    accountsOfParty: async () => [],
    // No snapshot either: every read goes to the (cut short) network.
    snapshotAccountFlows: () => null,
    snapshotAccountMovements: () => null,
    counterpartyAccountsAtMost: () => Infinity,
    ...overrides,
  } as unknown as SubjectContext;
}
