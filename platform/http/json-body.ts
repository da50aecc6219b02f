import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { checkJsonBounds } from '../../schemas/primitives/json-bounds.ts';
import { memberNameCount, repeatedMemberPath } from '../json/json-spans.ts';
import type { FieldError } from '../../schemas/problem.ts';

export type JsonBody =
  | { ok: true; value: unknown; text: string }
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

// Bodies arrive as raw bytes (the signature covers the bytes, not a re-serialisation) and are
// parsed here, after authentication.
export function readJsonBody(request: FastifyRequest): JsonBody {
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
  const tally = { members: 0 };
  const violation = checkJsonBounds(value, undefined, tally);
  if (violation) {
    return {
      ok: false,
      code: 'svc:validation/schema',
      detail: 'the body is past the bounds of a request',
      errors: [{ path: violation.path, code: 'svc:validation/schema', message: violation.message }],
    };
  }
  // A repeated member name: JSON.parse keeps its last value, which is all validation sees, while
  // the bytes kept (and relayed) hold the earlier ones too, a card number say. Refused (I-JSON).
  if (memberNameCount(text) !== tally.members) {
    return {
      ok: false,
      code: 'svc:validation/schema',
      detail: 'the body repeats a member name in one object',
      errors: [{ path: (repeatedMemberPath(text) ?? []).join('.'), code: 'svc:validation/schema', message: 'a member name may appear once in an object' }],
    };
  }
  return { ok: true, value, text };
}
