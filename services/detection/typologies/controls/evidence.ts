// Shaping evidence the same way in every control detector.
import type { SubjectContext } from '../../framework/context.ts';

const EVIDENCE_CAP = 50;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export function windowOf(from: Date, to: Date): { from: string; to: string } {
  return { from: from.toISOString(), to: to.toISOString() };
}

// Ids in order, each once, at most the evidence cap, with the movement that triggered the
// evaluation first when it is among them (it is what the analyst is looking at).
export function evidenceIds(ctx: SubjectContext, ids: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  const trigger = ctx.trigger?.object === 'movement' ? ctx.trigger.external_id : null;
  const ordered = trigger && unique.includes(trigger) ? [trigger, ...unique.filter((id) => id !== trigger)] : unique;
  return ordered.slice(0, EVIDENCE_CAP);
}

export function uniqueCapped(values: ReadonlyArray<string | null>): string[] {
  return [...new Set(values.filter((value): value is string => value !== null))].slice(0, EVIDENCE_CAP);
}

