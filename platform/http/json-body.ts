import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { checkJsonBounds } from '../../schemas/primitives/json-bounds.ts';
import { isPlainObject } from '../../schemas/validation/validate-item.ts';
import { batchSpans, memberNameCount, repeatedMemberPath } from '../json/json-spans.ts';
import type { FieldError } from '../../schemas/problem.ts';

export type JsonBody =
  // `batch`: a batch body read item by item (readJsonBody's `batch`).
  | { ok: true; value: unknown; text: string; batch?: BatchBody }
  // 415 when the content type is not JSON; 400 when the bytes are not one JSON value in UTF-8, or
  // a value past the bounds every route walks within (errors: where).
  | { ok: false; code: ErrorCode; detail: string; errors?: FieldError[] };

// What a refused body's problem says.
export function bodyRefusal(body: { detail: string; errors?: FieldError[] }): { detail: string; errors?: FieldError[] } {
  return body.errors ? { detail: body.detail, errors: body.errors } : { detail: body.detail };
}


export function rawBody(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : EMPTY;
}
const EMPTY = Buffer.alloc(0);

// A batch's items as their bytes hold them: each one's event text (the bytes to store), and the
// items refused for the bounds or a repeated member name, each then its own rejected result (the
// spec: validation is per item) instead of refusing the batch. A refused item's value in the
// parsed body is replaced by a token of its bytes, so nothing walks what the bounds refused and
// the body's content hash still tells two such items apart.
export interface BatchBody {
  items: Array<{ eventText: string | undefined; refusal?: FieldError }>;
}

// Where a batch's items sit: the body is depth 1, its events array 2.
const ITEM_DEPTH = 3;

// Bodies arrive as raw bytes (the signature covers the bytes, not a re-serialisation) and are
// parsed here, after authentication. With `batch`, a body that is an object with an events array
// is judged item by item (BatchBody); anything else, as a whole.
export function readJsonBody(request: FastifyRequest, options: { batch?: boolean } = {}): JsonBody {
  const contentType = request.headers['content-type'];
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    return { ok: false, code: 'svc:request/unsupported_media_type', detail: 'send the body as application/json' };
  }
  const bytes = rawBody(request);
  if (!isUtf8(bytes)) return { ok: false, code: 'svc:request/malformed_json', detail: 'the body is not valid UTF-8' };
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'svc:request/malformed_json', detail: bytes.length === 0 ? 'the body is empty' : 'the body is not valid JSON' };
  }
  if (options.batch && isPlainObject(value) && Array.isArray(value.events)) {
    const spans = batchSpans(text);
    if (spans && spans.items.length === value.events.length) return readBatch(value, value.events, text, spans);
  }
  const tally = { members: 0 };
  const violation = checkJsonBounds(value, undefined, tally);
  if (violation) return pastBounds(violation.path, violation.message);
  // A repeated member name: JSON.parse keeps its last value, which is all validation sees, while
  // the bytes kept (and relayed) hold the earlier ones too, a card number say. Refused (I-JSON).
  if (memberNameCount(text) !== tally.members) return repeatsName(repeatedMemberPath(text) ?? []);
  return { ok: true, value, text };
}

function readBatch(body: Record<string, unknown>, events: unknown[], text: string, spans: NonNullable<ReturnType<typeof batchSpans>>): JsonBody {
  // The envelope without its items, then each item on its own.
  const envelopeTally = { members: 0 };
  const envelope = checkJsonBounds({ ...body, events: [] }, undefined, envelopeTally);
  if (envelope) return pastBounds(envelope.path, envelope.message);
  const items: BatchBody['items'] = events.map((item, index) => {
    const span = spans.items[index]!;
    const itemText = text.slice(span.item.start, span.item.end);
    const eventText = span.event && text.slice(span.event.start, span.event.end);
    const tally = { members: 0 };
    const past = checkJsonBounds(item, undefined, tally, ITEM_DEPTH);
    const at = ['events', String(index)];
    const refusal: FieldError | undefined = past
      ? { path: [...at, ...(past.path === '' ? [] : [past.path])].join('.'), code: 'svc:validation/schema', message: past.message }
      : memberNameCount(itemText) !== tally.members
        ? { path: [...at, ...(repeatedMemberPath(itemText) ?? [])].join('.'), code: 'svc:validation/schema', message: REPEATED_NAME }
        : undefined;
    if (!refusal) return { eventText };
    events[index] = { refused_item_sha256: createHash('sha256').update(itemText).digest('hex') };
    return { eventText, refusal };
  });
  // The envelope's own names: the text's outside the events array (a second events member, whose
  // items JSON.parse dropped, counts here and is refused).
  const outside = memberNameCount(text.slice(0, spans.array.start)) + memberNameCount(text.slice(spans.array.end));
  if (outside !== envelopeTally.members) {
    return repeatsName(repeatedMemberPath(`${text.slice(0, spans.array.start)}[]${text.slice(spans.array.end)}`) ?? []);
  }
  return { ok: true, value: body, text, batch: { items } };
}

const REPEATED_NAME = 'a member name may appear once in an object';

function pastBounds(path: string, message: string): JsonBody {
  return { ok: false, code: 'svc:validation/schema', detail: 'the body is past the bounds of a request', errors: [{ path, code: 'svc:validation/schema', message }] };
}

function repeatsName(path: string[]): JsonBody {
  return {
    ok: false,
    code: 'svc:validation/schema',
    detail: 'the body repeats a member name in one object',
    errors: [{ path: path.join('.'), code: 'svc:validation/schema', message: REPEATED_NAME }],
  };
}

