import type { z } from 'zod';
import type { FieldError } from '../problem.ts';
import { dottedPath } from './validate-item.ts';

// The schema findings of a request body (case actions, webhook management) as field errors: one
// per unknown member, one per other issue. Messages are zod's, which never quote the value.
export function requestSchemaErrors(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: dottedPath([...issue.path, key]), code: 'svc:validation/schema', message: 'unknown member' }))
      : [{ path: dottedPath(issue.path), code: 'svc:validation/schema', message: issue.message }],
  );
}
