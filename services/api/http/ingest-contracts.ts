import { z } from 'zod';
import { batchRequestContract } from '../../../schemas/api-components.ts';
import { batchItemSchema, PUBLISHED_ENVELOPES } from '../../../schemas/envelope.ts';
import type { Family } from '../../../schemas/families/index.ts';
import { batchResponseSchema, dryRunResponseSchema, ingestReceiptSchema } from '../../../schemas/responses.ts';
import { json, problem } from './route-schema.ts';

// The declared contracts of ingest and of the dry-run validation. Their bodies keep their own
// parser (the signed bytes, validated item by item so each finding gets its governed code), so
// the body and headers are declared for the document and not run (contracts.ts).
const headers = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'replays the stored response for 24 h; scoped to tenant, endpoint and key' }),
});

const INGEST_FAILURES = {
  400: problem('the payload does not match the schema (svc:validation/*, with field paths)'),
  409: problem('svc:sequence/conflict or svc:idempotency/key_conflict'),
  413: problem('the body is above the payload cap'),
  429: problem('per-tenant rate limit (Retry-After)'),
};

export const ingestContract = (family: Family) => ({
  tags: ['ingest'],
  summary: `Ingest one ${family} event (scope ingest)`,
  headers,
  body: PUBLISHED_ENVELOPES[family],
  response: { 202: json(ingestReceiptSchema, 'accepted and committed (new, or a duplicate with idempotent_replay true)'), ...INGEST_FAILURES },
});

export const batchContract = {
  tags: ['ingest'],
  summary: 'Ingest 1-1000 events of mixed families in one transaction (scope ingest)',
  headers,
  body: batchRequestContract,
  response: {
    202: json(batchResponseSchema, 'at least one item accepted; check results[i].outcome'),
    422: json(batchResponseSchema, 'every item rejected'),
    ...INGEST_FAILURES,
    413: problem('more than 1000 events (svc:batch/too_large) or the body is above the payload cap'),
  },
};

export const validateContract = {
  tags: ['ingest'],
  summary: 'Run the live validation on a batch or one item; nothing is stored (scope ingest or read)',
  body: z.union([batchRequestContract, batchItemSchema]),
  response: {
    200: json(dryRunResponseSchema, 'every item is valid'),
    422: json(dryRunResponseSchema, 'at least one item is invalid'),
    400: problem('malformed body or batch envelope'),
    413: problem('more than 1000 items, or the body is above the payload cap'),
  },
};
