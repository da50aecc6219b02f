// Builders the control-event detectors' tests share.
import type { DetectionWorld, MovementSpec } from '../../../../test/support/detection-world.ts';

// A party holding two accounts: `<party>-a1` and `<party>-a2`.
export async function customerWithTwoAccounts(world: DetectionWorld, party: string, data: Record<string, unknown> = {}): Promise<void> {
  await world.party(party, data);
  await world.account(`${party}-a1`, party);
  await world.account(`${party}-a2`, party);
}

// A payment out of the party's first account to someone the tenant does not know.
export const outflow = (party: string, id: string, value: number, at: string | Date, extra: Partial<MovementSpec> = {}): MovementSpec => ({
  id,
  from: [`${party}-a1`, party],
  to: [null, null],
  value,
  at,
  ...extra,
});
