import type { FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import { PROBLEM_CONTENT_TYPE, type FieldError } from '../../../schemas/problem.ts';
import { problemFor } from '../../../platform/http/problem-reply.ts';
import type { StoredResponse } from './idempotency.ts';
import type { ItemResult } from './ingest-items.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

// Ingest outcomes become HTTP here, as complete responses, so that an Idempotency-Key can store
// exactly the bytes that were sent and replay them verbatim.
export function problemResponse(
  request: FastifyRequest,
  code: ErrorCode,
  options: { detail?: string; errors?: FieldError[] } = {},
): StoredResponse {
  const problem = problemFor(request, code, options);
  return { status: problem.status, contentType: PROBLEM_CONTENT_TYPE, body: JSON.stringify(problem) };
}

function itemProblem(request: FastifyRequest, result: Exclude<ItemResult, { kind: 'accepted' }>) {
  switch (result.kind) {
    case 'invalid':
      return problemFor(request, result.code, { detail: 'the event failed validation', errors: result.errors });
    case 'conflict':
      return problemFor(request, 'svc:sequence/conflict', { detail: 'the dedup key already holds different content; nothing was overwritten', errors: result.errors });
  }
}

// A single-event endpoint: 202 receipt, 400 validation problem, or 409 conflict.
export function singleResponse(request: FastifyRequest, result: ItemResult): StoredResponse {
  if (result.kind === 'accepted') return { status: 202, contentType: JSON_TYPE, body: JSON.stringify(result.receipt) };
  const problem = itemProblem(request, result);
  return { status: problem.status, contentType: PROBLEM_CONTENT_TYPE, body: JSON.stringify(problem) };
}

// POST /v1/batches: 202 when at least one item was accepted (duplicates count), 422 otherwise.
export function batchResponse(request: FastifyRequest, results: ItemResult[]): StoredResponse {
  const accepted = results.filter((r) => r.kind === 'accepted').length;
  const body = {
    accepted,
    rejected: results.length - accepted,
    results: results.map((result, index) =>
      result.kind === 'accepted'
        ? { index, outcome: 'accepted' as const, receipt: result.receipt }
        : { index, outcome: 'rejected' as const, problem: itemProblem(request, result) },
    ),
  };
  return { status: accepted > 0 ? 202 : 422, contentType: JSON_TYPE, body: JSON.stringify(body) };
}
