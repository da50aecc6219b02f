// An import's window: rows before backfill_from are too old, rows at or after the go-live
// watermark belong to live ingest. Both are the spec's timestamp_out_of_range.
import type { Envelope } from '../../schemas/envelope.ts';
import { dateTimeMs } from '../../schemas/primitives/timestamp.ts';
import type { ImportRow } from './imports.ts';
import type { ImportReject } from './map-chunk.ts';

export function outsideWindow(
  job: Pick<ImportRow, 'family' | 'backfill_from' | 'go_live_at'>,
  event: Envelope,
  at: { rowNo: number; chunkNo: number; raw: string },
): ImportReject | undefined {
  const ms = dateTimeMs(event.occurred_at);
  const late = ms >= job.go_live_at.getTime();
  if (!late && ms >= job.backfill_from.getTime()) return undefined;
  return {
    row_no: at.rowNo,
    chunk_no: at.chunkNo,
    code: 'svc:validation/timestamp_out_of_range',
    object_type: job.family,
    external_id: event.external_id,
    message: late ? "occurred_at: at or after the import's go-live watermark (live ingest carries it)" : "occurred_at: older than the import's backfill window",
    raw: at.raw,
  };
}
