import { Readable } from 'node:stream';
import { z } from 'zod';
import { PROBLEM_CONTENT_TYPE, problemSchema } from '../../../schemas/problem.ts';

// The pieces every route's declared contract is made of. Responses are declared per status and
// media type with a description, so the document says what each answer means.
export const CAPABILITY_TAGS = [
  { name: 'ingest', description: 'Events in: one family at a time or in batches, their status, and the dry-run validation' },
  { name: 'canonical reads', description: 'The current version of each entity, a party\'s movements, posture and graph' },
  { name: 'detection and cases', description: 'Alerts, episodes and their case (scope compliance)' },
  { name: 'webhooks', description: 'Endpoints, secrets, tests, the delivery log and replay (scope webhook_mgmt)' },
  { name: 'imports', description: 'Historical imports: mapping dry-runs, chunked uploads, the reject report' },
  { name: 'reconciliations', description: 'Declared control totals, their differences, breaks and expected declarations' },
  { name: 'health', description: 'Liveness' },
] as const;

export const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
export const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: problemSchema } } });
// An answer without a body (204).
export const empty = (description: string) => z.undefined().describe(description);

// The problems of a read by id: malformed or unknown ids are both a governed 404.
export const notFound = (description = 'unknown in this tenant, or not an id of this kind') => problem(description);
export const invalidQuery = problem('invalid query parameters (svc:request/invalid_parameter, path = the parameter)');

// A path parameter: any text; what is not a valid id of its kind is answered as unknown (404).
export const idParam = (prefix: string) => z.string().describe(`${prefix}<uuid>, or the bare uuid`);
export const externalIdParam = () => z.string().describe('the external_id the customer gave');

// A CSV report, streamed page by page.
export const csvStream = z.custom<Readable>((value) => value instanceof Readable).meta({ type: 'string', description: 'CSV (RFC 4180) with a header line' });
