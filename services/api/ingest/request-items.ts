import { MAX_BATCH_ITEMS } from '../../../schemas/envelope.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { isPlainObject } from '../../../schemas/validation/validate-item.ts';

export type RequestItems =
  | { kind: 'items'; items: unknown[]; prefix: (index: number) => string[] }
  // 400: the batch wrapper itself is malformed (events missing, empty, not an array, extra members).
  | { kind: 'malformed'; errors: FieldError[] }
  // 413 svc:batch/too_large.
  | { kind: 'too_many'; count: number };

// The items of a BatchRequest ({events: [...]}) with their body paths (events.3), checked only as
// far as the wrapper goes: each item is validated on its own so one bad item is one result.
export function batchItems(body: unknown): RequestItems {
  const errors: FieldError[] = [];
  if (!isPlainObject(body)) {
    return { kind: 'malformed', errors: [{ path: '', code: 'svc:validation/schema', message: 'the body must be an object with member events' }] };
  }
  for (const key of Object.keys(body)) {
    if (key !== 'events') errors.push({ path: key, code: 'svc:validation/schema', message: 'unknown member' });
  }
  const events = body.events;
  if (events === undefined) errors.push({ path: 'events', code: 'svc:validation/schema', message: 'required member is missing' });
  else if (!Array.isArray(events)) errors.push({ path: 'events', code: 'svc:validation/schema', message: 'must be an array of 1 to 1000 items' });
  else if (events.length === 0) errors.push({ path: 'events', code: 'svc:validation/schema', message: 'must hold at least one item' });
  if (errors.length > 0) return { kind: 'malformed', errors };
  const items = events as unknown[];
  if (items.length > MAX_BATCH_ITEMS) return { kind: 'too_many', count: items.length };
  return { kind: 'items', items, prefix: (index) => ['events', String(index)] };
}

// POST /v1/validate takes a BatchRequest or one bare item ({object, event}).
export function validateRequestItems(body: unknown): RequestItems {
  if (isPlainObject(body) && Object.hasOwn(body, 'events')) return batchItems(body);
  return { kind: 'items', items: [body], prefix: () => [] };
}

// The problem that answers a request whose items could not be taken out.
export function wrapperRefusal(found: Exclude<RequestItems, { kind: 'items' }>): { code: ErrorCode; detail: string; errors?: FieldError[] } {
  switch (found.kind) {
    case 'malformed':
      return { code: 'svc:validation/schema', detail: 'the batch envelope is malformed', errors: found.errors };
    case 'too_many':
      return { code: 'svc:batch/too_large', detail: `a batch holds at most ${MAX_BATCH_ITEMS} events; this one has ${found.count}` };
  }
}
