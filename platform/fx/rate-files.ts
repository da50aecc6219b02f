import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { ASSET_CODE } from '../../schemas/assets/registry.ts';
import { MAX_SCALE } from '../../schemas/primitives/money.ts';
import { canonicalInstant, isDateTime } from '../../schemas/primitives/timestamp.ts';
import { uuidv7 } from '../ids.ts';
import { withTransaction, type Pool } from '../postgres/pool.ts';

const RATE_FILE_COLUMNS = ['base', 'quote', 'rate', 'rate_scale', 'valid_from'] as const;

interface RateRow {
  base: string;
  quote: string;
  rate: string;
  rateScale: number;
  validFrom: string;
}

export type RateFileCheck =
  | { ok: true; rows: RateRow[] }
  // Every finding with its line number; nothing is loaded.
  | { ok: false; errors: Array<{ line: number; message: string }> };

const RATE = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

// A rate file is CSV with the header base,quote,rate,rate_scale,valid_from: 1 base = rate quote
// from valid_from on. It is checked whole; one bad row refuses the file.
export function checkRateFile(text: string): RateFileCheck {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    // info.lines: the line each record ends on, so a refusal points at the line to fix.
    records = parse(text, { relax_column_count: true, skip_empty_lines: true, trim: true, info: true }) as unknown as typeof records;
  } catch (error) {
    return { ok: false, errors: [{ line: (error as { lines?: number }).lines ?? 1, message: `not valid CSV: ${(error as Error).message}` }] };
  }
  const [header, ...body] = records;
  if (!header || header.record.join(',') !== RATE_FILE_COLUMNS.join(',')) {
    return { ok: false, errors: [{ line: 1, message: `the header must be ${RATE_FILE_COLUMNS.join(',')}` }] };
  }
  if (body.length === 0) return { ok: false, errors: [{ line: 2, message: 'the file holds no rates' }] };
  const errors: Array<{ line: number; message: string }> = [];
  const rows: RateRow[] = [];
  const seen = new Set<string>();
  body.forEach(({ record, info }) => {
    const line = info.lines;
    const problem = checkRow(record);
    if (typeof problem === 'string') return errors.push({ line, message: problem });
    const key = `${problem.base}/${problem.quote}@${Date.parse(problem.validFrom)}`;
    if (seen.has(key)) return errors.push({ line, message: `a second rate for ${problem.base}/${problem.quote} at ${problem.validFrom}` });
    seen.add(key);
    rows.push(problem);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, rows };
}

function checkRow(record: string[]): RateRow | string {
  if (record.length !== RATE_FILE_COLUMNS.length) return `expected ${RATE_FILE_COLUMNS.length} fields, found ${record.length}`;
  const [base, quote, rate, scaleText, validFrom] = record as [string, string, string, string, string];
  if (!ASSET_CODE.test(base)) return `base ${JSON.stringify(base)} is not an asset code`;
  if (!ASSET_CODE.test(quote)) return `quote ${JSON.stringify(quote)} is not an asset code`;
  if (base === quote) return 'base and quote are the same asset';
  if (!/^[0-9]{1,2}$/.test(scaleText) || Number(scaleText) > MAX_SCALE) return `rate_scale must be an integer 0-${MAX_SCALE}`;
  const rateScale = Number(scaleText);
  const match = RATE.exec(rate);
  if (!match) return 'rate must be a positive decimal string such as 1.0825';
  const decimals = match[2] ? match[2].length - 1 : 0;
  if (decimals > rateScale) return `rate has ${decimals} decimal places, more than rate_scale ${rateScale}`;
  if (/^[0.]+$/.test(rate)) return 'rate must be greater than zero';
  if (!isDateTime(validFrom)) return 'valid_from must be an RFC 3339 date-time with an offset';
  // The instant, not the text: PostgreSQL refuses offsets past ±15:59 that RFC 3339 allows.
  return { base, quote, rate, rateScale, validFrom: canonicalInstant(validFrom) };
}

export type LoadOutcome = { kind: 'loaded'; fileId: string; rows: number } | { kind: 'refused'; errors: Array<{ line: number; message: string }> };

export async function loadRateFile(pool: Pool, name: string, text: string, now: Date): Promise<LoadOutcome> {
  const check = checkRateFile(text);
  if (!check.ok) return { kind: 'refused', errors: check.errors };
  const fileId = uuidv7(now.getTime());
  await withTransaction(pool, async (client) => {
    await client.query('INSERT INTO fx_rate_files (file_id, name, sha256, row_count, loaded_at) VALUES ($1, $2, $3, $4, $5)', [
      fileId,
      name,
      createHash('sha256').update(text).digest(),
      check.rows.length,
      now,
    ]);
    await client.query(
      `INSERT INTO fx_rates (file_id, base, quote, rate, rate_scale, valid_from, loaded_at)
       SELECT $1, * , $7 FROM unnest($2::text[], $3::text[], $4::numeric[], $5::smallint[], $6::timestamptz[])`,
      [
        fileId,
        check.rows.map((r) => r.base),
        check.rows.map((r) => r.quote),
        check.rows.map((r) => r.rate),
        check.rows.map((r) => r.rateScale),
        check.rows.map((r) => r.validFrom),
        now,
      ],
    );
  });
  return { kind: 'loaded', fileId, rows: check.rows.length };
}
