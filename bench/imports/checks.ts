import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { TENANT } from '../lib/bench-service.ts';
import { externalId } from './movements.ts';
import { BATCH_PREFIX, IMPORT_PREFIX, ROWS, SAME_EVENT_SAMPLES } from './settings.ts';

// After both sides: what landed in the inbox, read straight from the database.

export interface Landed {
  imported: number;
  importedHistorical: number;
  batched: number;
  // Rows of the sample whose imported and batched events are equal apart from external_id.
  sameEvents: number;
  sampled: number;
  firstDifference: string | undefined;
}

export async function landedRows(pool: pg.Pool, baselineRows: number): Promise<Landed> {
  const { rows: counts } = await pool.query<{ imported: number; historical: number; batched: number }>(
    `SELECT count(*) FILTER (WHERE starts_with(external_id, $2))::int AS imported,
            count(*) FILTER (WHERE starts_with(external_id, $2) AND historical AND import_id IS NOT NULL)::int AS historical,
            count(*) FILTER (WHERE starts_with(external_id, $3))::int AS batched
       FROM inbox_events WHERE tenant_id = $1 AND object = 'movement'`,
    [TENANT, IMPORT_PREFIX, BATCH_PREFIX],
  );

  // Rows spread over the baseline's part of the file, the first and last included.
  const sample = [...new Set(Array.from({ length: SAME_EVENT_SAMPLES }, (_, i) => Math.round((i * (baselineRows - 1)) / Math.max(1, SAME_EVENT_SAMPLES - 1))))];
  const ids = sample.flatMap((n) => [externalId(IMPORT_PREFIX, n, ROWS), externalId(BATCH_PREFIX, n, ROWS)]);
  const { rows } = await pool.query<{ external_id: string; raw_event: Buffer }>(
    `SELECT external_id, raw_event FROM inbox_events WHERE tenant_id = $1 AND object = 'movement' AND external_id = ANY($2::text[])`,
    [TENANT, ids],
  );
  const byId = new Map(rows.map((r) => [r.external_id, JSON.parse(r.raw_event.toString('utf8')) as Record<string, unknown>]));
  let sameEvents = 0;
  let firstDifference: string | undefined;
  for (const n of sample) {
    const imported = byId.get(externalId(IMPORT_PREFIX, n, ROWS));
    const batched = byId.get(externalId(BATCH_PREFIX, n, ROWS));
    const strip = (event: Record<string, unknown> | undefined) => (event ? { ...event, external_id: undefined } : undefined);
    if (imported && batched && isDeepStrictEqual(strip(imported), strip(batched))) sameEvents++;
    else firstDifference ??= `row ${n}: imported ${JSON.stringify(imported)} / batched ${JSON.stringify(batched)}`;
  }
  const c = counts[0]!;
  return { imported: c.imported, importedHistorical: c.historical, batched: c.batched, sameEvents, sampled: sample.length, firstDifference };
}
