import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { parseIsoTimestamptz } from './timestamptz.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);
afterAll(async () => db?.drop());

// Each value as PostgreSQL writes it, as the pool reads it, and its instant in whole milliseconds
// by the server's own arithmetic (the fraction cut, as the library's parser cuts it).
const SAMPLE = `SELECT v::text AS text, v AS value, floor(extract(epoch FROM v) * 1000)::float8 AS ms FROM unnest($1::timestamptz[]) AS v`;

describe('timestamptz text', () => {
  it('reads what PostgreSQL writes, in any session time zone, to the millisecond the server means', async () => {
    const client = await db.pool.connect();
    try {
      const seen: string[] = [];
      // Offsets of whole hours, of minutes (India, Newfoundland, Chatham) and of seconds (local
      // mean time before 1900); fractions of every length; the edges of a millisecond.
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'Pacific/Chatham']) {
        await client.query(`SET TIME ZONE '${zone}'`);
        const { rows } = await client.query<{ text: string; value: Date; ms: number }>(SAMPLE, [
          [
            '2026-01-31 12:34:56+00',
            '2026-01-31 12:34:56.1+00',
            '2026-01-31 12:34:56.123456+00',
            '2026-07-01 00:00:00.999999+00',
            '2026-03-29 01:30:00.0005+00',
            '1850-06-15 08:00:00+00',
            '1000-01-02 00:00:00+00',
            '9999-12-30 23:59:59.999+00',
          ],
        ]);
        for (const row of rows) {
          seen.push(row.text);
          expect(parseIsoTimestamptz(row.text)?.getTime(), row.text).toBe(row.ms);
          expect(row.value.getTime(), row.text).toBe(row.ms);
        }
      }
      expect(seen.some((text) => /[+-]\d\d:\d\d:\d\d$/.test(text))).toBe(true);
      expect(seen.some((text) => /[+-]\d\d:\d\d$/.test(text))).toBe(true);
    } finally {
      await client.query('RESET TIME ZONE');
      client.release();
    }
  });

  it('leaves every other shape to the library: infinity, BC, a year past 9999', async () => {
    for (const text of ['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '12026-01-01 00:00:00+00', '0099-01-01 00:00:00+00', '2026-01-31', '2026-01-31 12:34:56', '2026-01-31 12:34:56+0', '2026-01-31 12:34:56+05:3', '2026-01-31 12:34:56+05-30']) {
      expect(parseIsoTimestamptz(text), text).toBeUndefined();
    }
    const { rows } = await db.pool.query<{ value: Date | number; ms: number | null }>(
      `SELECT v AS value, CASE WHEN isfinite(v) THEN floor(extract(epoch FROM v) * 1000)::float8 END AS ms
         FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(v, n) ORDER BY n`,
      [['infinity', '0044-03-15 12:00:00+00 BC', '12026-01-01 00:00:00+00']],
    );
    expect(rows[0]!.value).toBe(Infinity);
    expect((rows[1]!.value as Date).getTime()).toBe(rows[1]!.ms);
    expect((rows[2]!.value as Date).getTime()).toBe(rows[2]!.ms);
  });
});
