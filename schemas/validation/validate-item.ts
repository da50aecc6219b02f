import type { z } from 'zod';
import type { AssetRegistry } from '../assets/registry.ts';
import { ENVELOPES, SCHEMA_VERSION, type Envelope } from '../envelope.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { FAMILIES, FAMILY_NAMES, isFamily, moneyFields, type Family } from '../families/index.ts';
import { MAX_SCALE, checkMoneyScale, moneySchema } from '../primitives/money.ts';
import { containsPan, findPans } from '../primitives/pan.ts';
import { dateTimeMs, isDateTime } from '../primitives/timestamp.ts';
import type { FieldError } from '../problem.ts';

// The live validation of one item ({object, event}), shared by ingest, batches, validate and
// imports. Pure: the tenant's asset registry and the current time come in as arguments.
export interface ValidationContext {
  registry: AssetRegistry;
  nowMs: number;
  // How far into the future occurred_at may lie.
  futureSkewMs: number;
}

export type ItemValidation =
  // occurredAt: the instant of event.occurred_at, read once here for everything after.
  | { ok: true; object: Family; event: Envelope; occurredAt: Date }
  | { ok: false; code: ErrorCode; errors: FieldError[]; object?: Family; externalId?: string };

// Oldest accepted occurred_at: nothing this service models happened before the Unix epoch.
const EARLIEST_OCCURRED_AT_MS = 0;

// When an item breaks several rules, the problem carries the code of the most fundamental one;
// errors[] still lists every finding with its own code.
const CODE_PRECEDENCE: ErrorCode[] = [
  'svc:validation/unsupported_schema_version',
  'svc:validation/pan_detected',
  'svc:validation/schema',
  'svc:validation/money_scale_mismatch',
  'svc:validation/timestamp_out_of_range',
];

export function dottedPath(path: readonly (string | number | symbol)[]): string {
  return path.map(String).join('.');
}

export function validateItem(raw: unknown, ctx: ValidationContext, prefix: string[] = []): ItemValidation {
  const errors: FieldError[] = [];
  const at = (...path: (string | number)[]) => dottedPath([...prefix, ...path]);
  const schemaError = (path: string, message: string) => errors.push({ path, code: 'svc:validation/schema', message });

  if (!isPlainObject(raw)) {
    schemaError(at(), 'must be an object with members object and event');
    return fail(errors);
  }
  for (const key of Object.keys(raw)) {
    if (key !== 'object' && key !== 'event' && !containsPan(key)) schemaError(at(key), 'unknown member');
  }
  const object = raw.object;
  if (object === undefined) schemaError(at('object'), 'required member is missing');
  else if (!isFamily(object)) schemaError(at('object'), `must be one of ${FAMILY_NAMES.join(', ')}`);

  const event = raw.event;
  // Echoed back on the item's result, so never when it holds a card number.
  const externalId =
    isPlainObject(event) && typeof event.external_id === 'string' && !containsPan(event.external_id) ? event.external_id : undefined;
  if (event === undefined) schemaError(at('event'), 'required member is missing');
  else if (!isPlainObject(event)) schemaError(at('event'), 'must be an object');

  // A money value's minor units are a quantity, not a card number (decision 0060).
  const money = isFamily(object) && isPlainObject(event) ? new Set(moneyFields(object, event.data).map((field) => field.money)) : undefined;
  for (const path of findPans(raw, [], money)) {
    errors.push({ path: at(...path), code: 'svc:validation/pan_detected', message: 'a full card number is not accepted in any field' });
  }
  if (!isFamily(object) || !isPlainObject(event)) return fail(errors, isFamily(object) ? object : undefined, externalId);

  const unsupportedVersion = event.schema_version !== undefined && event.schema_version !== SCHEMA_VERSION;
  if (unsupportedVersion) {
    errors.push({
      path: at('event', 'schema_version'),
      code: 'svc:validation/unsupported_schema_version',
      message: `schema_version must be ${SCHEMA_VERSION}`,
    });
  }

  const parsed = ENVELOPES[object].safeParse(event);
  if (!parsed.success) {
    const scales = scalesOutOfRange(object, event.data, ctx.registry);
    for (const issue of parsed.error.issues) {
      if (unsupportedVersion && issue.path.length === 1 && issue.path[0] === 'schema_version') continue;
      const scale = scales.get(dottedPath(issue.path));
      if (scale === undefined) errors.push(...issueErrors(issue, event, (p) => at('event', ...p.map(String))));
      else if (!scale.reported) {
        errors.push({ path: at('event', ...issue.path.map(String)), code: 'svc:validation/money_scale_mismatch', message: scale.message });
        scale.reported = true;
      }
    }
  }

  // Facts are immutable and never versioned: their dedup key has no sequence.
  if (FAMILIES[object].kind === 'fact' && event.sequence !== undefined) {
    schemaError(at('event', 'sequence'), `${object} is a fact and carries no sequence; correct it with a new event`);
  }

  for (const { path, money } of moneyFields(object, event.data)) {
    const shaped = moneySchema.safeParse(money);
    if (!shaped.success) continue;
    const problem = checkMoneyScale(shaped.data, ctx.registry);
    if (problem) {
      errors.push({ path: at('event', 'data', ...path, problem.field), code: 'svc:validation/money_scale_mismatch', message: problem.message });
    }
  }

  // The envelope's schema has checked the date-time when it passed; otherwise it is checked here.
  let occurredAtMs = Number.NaN;
  if (typeof event.occurred_at === 'string' && (parsed.success || isDateTime(event.occurred_at))) {
    occurredAtMs = dateTimeMs(event.occurred_at);
    if (occurredAtMs > ctx.nowMs + ctx.futureSkewMs) {
      errors.push({ path: at('event', 'occurred_at'), code: 'svc:validation/timestamp_out_of_range', message: 'occurred_at lies further in the future than the tolerated clock skew' });
    } else if (occurredAtMs < EARLIEST_OCCURRED_AT_MS) {
      errors.push({ path: at('event', 'occurred_at'), code: 'svc:validation/timestamp_out_of_range', message: 'occurred_at lies before 1970-01-01T00:00:00Z' });
    }
  }

  if (errors.length > 0 || !parsed.success) return fail(errors, object, externalId);
  return { ok: true, object, event: parsed.data, occurredAt: new Date(occurredAtMs) };
}

// A money scale that is an integer outside 0-18 cannot match the asset registry: the spec answers
// a scale that does not match with money_scale_mismatch, so the range refusal becomes that code.
// Keyed by the scale's path within the event (data.amount.scale), with the registry's message.
function scalesOutOfRange(object: Family, data: unknown, registry: AssetRegistry): Map<string, { message: string; reported: boolean }> {
  const found = new Map<string, { message: string; reported: boolean }>();
  for (const { path, money } of moneyFields(object, data)) {
    if (!isPlainObject(money) || !Number.isInteger(money.scale)) continue;
    const scale = money.scale as number;
    if (scale >= 0 && scale <= MAX_SCALE) continue;
    const expected = typeof money.asset === 'string' ? registry.scaleOf(money.asset) : undefined;
    const message = expected === undefined ? `a scale must be 0-${MAX_SCALE} and match the asset registry, not ${scale}` : `${money.asset as string} has scale ${expected} in the asset registry, not ${scale}`;
    found.set(dottedPath(['data', ...path, 'scale']), { message, reported: false });
  }
  return found;
}

function fail(errors: FieldError[], object?: Family, externalId?: string): ItemValidation {
  const code = CODE_PRECEDENCE.find((c) => errors.some((e) => e.code === c)) ?? 'svc:validation/schema';
  return { ok: false, code, errors, object, externalId };
}

// One zod issue as field errors. Messages never quote the submitted value (it may be personal
// data or a card number).
function issueErrors(issue: z.core.$ZodIssue, root: unknown, render: (path: PropertyKey[]) => string): FieldError[] {
  if (issue.code === 'unrecognized_keys') {
    // A member name holding a card number is reported (once) as pan_detected, never echoed here.
    return issue.keys
      .filter((key) => !containsPan(key))
      .map((key) => ({ path: render([...issue.path, key]), code: 'svc:validation/schema', message: 'unknown member' }));
  }
  const missing = valueAt(root, issue.path) === undefined;
  const message = missing ? 'required member is missing' : issue.message;
  return [{ path: render(issue.path), code: 'svc:validation/schema', message }];
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
