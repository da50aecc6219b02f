// A query read the console's way (strictQuery) answers every finding at once, checks across
// parameters included, takes an empty value as absent and refuses a parameter it does not know.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { dateTime, integer, needs, single, strictQuery, text, windowCheck } from './query-schema.ts';

const query = strictQuery(
  {
    kind: single(['party', 'account'] as const),
    subject: text({ max: 8 }).optional(),
    since: dateTime(),
    until: dateTime(),
    limit: integer({ min: 1, max: 10, fallback: 5 }),
  },
  needs('kind', 'subject'),
  windowCheck('since', 'until'),
);

const findings = (value: Record<string, unknown>) => {
  const parsed = query.safeParse(value);
  return parsed.success ? [] : requestSchemaErrors(parsed.error).map((e) => `${e.path}: ${e.message}`);
};

describe('strictQuery', () => {
  it('reads valid parameters, an empty value as absent', () => {
    const parsed: z.output<typeof query> = query.parse({ kind: 'party', subject: 'p1', since: '2026-01-01T00:00:00Z', until: '', limit: '' });
    expect(parsed).toEqual({ kind: 'party', subject: 'p1', since: new Date('2026-01-01T00:00:00Z'), limit: 5 });
  });

  it('reports checks across parameters beside the other parameters\' findings', () => {
    expect(findings({ kind: 'party', limit: '11', since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' })).toEqual([
      'limit: must be an integer 1-10',
      'kind: needs subject',
      'since: must not be after until',
    ]);
  });

  it('runs a check across parameters only once the parameters it reads are valid', () => {
    expect(findings({ kind: 'shop', since: 'yesterday', until: '2026-01-01T00:00:00Z' })).toEqual([
      'kind: unknown value(s) shop; allowed: party, account',
      'since: must be an RFC 3339 date-time with an offset',
    ]);
  });

  it('refuses an unknown parameter and a repeated one', () => {
    expect(findings({ sort: 'x', subject: ['a', 'b'] })).toEqual(['subject: must be given once', 'sort: unknown member']);
  });
});
