// A small bank for the learned model's tests: mules that are paid by six payers within hours and
// pass the money on, and ordinary accounts paying each other now and then. Accounts mule-0..7 and
// normal-0..23 are labelled (labelRows); mule-8 and normal-24 exist unlabelled, for the model to
// judge afterwards.
import type { DetectionWorld, MovementSpec } from '../../../test/support/detection-world.ts';

export const TENANT = 'acme';
export const MULES = 8;
export const NORMALS = 24;
export const day = (d: number, hour = 10) => new Date(Date.UTC(2026, 6, d, hour)).toISOString();

let seq = 0;

export function mulePattern(mule: string, onDay: number): MovementSpec[] {
  const specs: MovementSpec[] = [];
  for (let p = 0; p < 6; p += 1) specs.push({ id: `mv-${seq++}`, from: [`payer-${mule}-${p}`, 'payers'], to: [mule, `p-${mule}`], value: 90_000 + p * 100, at: day(onDay, 9 + p) });
  specs.push({ id: `mv-${seq++}`, from: [mule, `p-${mule}`], to: ['sink', 'sinks'], value: 500_000, at: day(onDay, 16) });
  return specs;
}

export function ordinary(account: string, i: number, onDay: number, peer = `normal-${(i + 1) % NORMALS}`): MovementSpec[] {
  return [
    { id: `mv-${seq++}`, from: [account, `p-${account}`], to: [peer, `p-${peer}`], value: 4_000 + i * 10, at: day(onDay, 11) },
    { id: `mv-${seq++}`, from: [peer, `p-${peer}`], to: [account, `p-${account}`], value: 3_500 + i * 10, at: day(onDay + 7, 12) },
  ];
}

export async function buildBank(world: DetectionWorld): Promise<void> {
  const mules = Array.from({ length: MULES + 1 }, (_, i) => `mule-${i}`);
  const normals = Array.from({ length: NORMALS + 1 }, (_, i) => `normal-${i}`);
  await world.party('payers');
  await world.party('sinks');
  await world.account('sink', 'sinks');
  for (const mule of mules) for (let p = 0; p < 6; p += 1) await world.account(`payer-${mule}-${p}`, 'payers');
  for (const id of [...mules, ...normals]) {
    await world.party(`p-${id}`);
    await world.account(id, `p-${id}`);
  }
  const specs: MovementSpec[] = [];
  mules.slice(0, MULES).forEach((mule, i) => specs.push(...mulePattern(mule, 2 + i)));
  normals.slice(0, NORMALS).forEach((account, i) => specs.push(...ordinary(account, i, 1 + (i % 12))));
  await world.movements(specs);
  await world.settle();
}

// The label file's rows (after the header) for the labelled accounts.
export const labelRows = (): string[] => [
  ...Array.from({ length: MULES }, (_, i) => `account,mule-${i},1`),
  ...Array.from({ length: NORMALS }, (_, i) => `account,normal-${i},0`),
];
