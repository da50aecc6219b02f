import { z } from 'zod';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCode } from './errors/catalog.ts';

// A code of the governed catalog.
export const errorCodeSchema = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]);

// RFC 9457 problem details as the spec shapes them.
const fieldErrorSchema = z.strictObject({
  path: z.string(),
  code: errorCodeSchema,
  message: z.string(),
});

export const problemSchema = z.strictObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  code: errorCodeSchema,
  detail: z.string(),
  instance: z.string(),
  correlation_id: z.string(),
  errors: z.array(fieldErrorSchema),
});

export type FieldError = z.infer<typeof fieldErrorSchema>;
export type Problem = z.infer<typeof problemSchema>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

function problemType(code: ErrorCode): string {
  return `urn:svc:problem:${code.slice('svc:'.length)}`;
}

export function buildProblem(
  code: ErrorCode,
  context: { instance: string; correlationId: string; detail?: string; errors?: FieldError[] },
): Problem {
  const entry = ERROR_CATALOG[code];
  return {
    type: problemType(code),
    title: entry.title,
    status: entry.status,
    code,
    detail: context.detail ?? entry.title,
    instance: context.instance,
    correlation_id: context.correlationId,
    errors: context.errors ?? [],
  };
}
