// One chunk of an import file, row by row: read in the mapping's dialect, assembled into the
// mapping's family, then checked by the live validation (the same rules as ingest). Dry-run and
// the import worker both read chunks through this, so a row is judged the same way by both.
import type { Envelope } from '../../schemas/envelope.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import type { Family } from '../../schemas/families/index.ts';
import { containsPan } from '../../schemas/primitives/pan.ts';
import { validateItem, type ValidationContext } from '../../schemas/validation/validate-item.ts';
import { readCsvChunk } from './dialects/csv.ts';
import { readJsonlChunk } from './dialects/jsonl.ts';
import { ChunkError, type ChunkPosition, type ReadLimits, type SourceRecord } from './dialects/types.ts';
import { assembleRow, type SourceRow } from './mapping/assemble.ts';
import type { CompiledMapping } from './mapping/compile.ts';

// The spec's import reject record.
export interface ImportReject {
  row_no: number | null;
  chunk_no: number;
  code: ErrorCode;
  object_type: Family;
  external_id: string | null;
  message: string;
  raw: string | null;
}

export type MappedRow =
  | { kind: 'valid'; rowNo: number; chunkNo: number; object: Family; event: Envelope }
  | { kind: 'skipped'; rowNo: number; chunkNo: number }
  | { kind: 'rejected'; reject: ImportReject };

// A source row holding a card number is never repeated back, in a report or anywhere else.
const WITHHELD = '(withheld: the row contains a full card number)';

export interface ChunkReading {
  rows: AsyncIterable<MappedRow>;
  // The CSV header record read from chunk 0, for later chunks (undefined for JSONL).
  fileHeader: () => string[] | undefined;
}

export function mapChunk(
  mapping: CompiledMapping,
  bytes: AsyncIterable<Uint8Array>,
  at: ChunkPosition,
  context: { validation: ValidationContext; limits?: ReadLimits },
): ChunkReading {
  const family = mapping.family;
  const nullValues = new Set(mapping.csv?.nullValues ?? mapping.jsonl?.nullValues ?? []);
  const assembly = { targets: mapping.targets, ...(mapping.document.row_filter ? { rowFilter: mapping.document.row_filter } : {}) };
  const scaleOf = (asset: string) => context.validation.registry.scaleOf(asset);
  const limits = context.limits ?? {};
  let records: AsyncIterable<SourceRecord>;
  let fileHeader: () => string[] | undefined = () => undefined;
  if (mapping.csv) {
    const reader = readCsvChunk(bytes, mapping.csv, at, limits);
    records = reader.records;
    fileHeader = () => reader.fileHeader();
  } else {
    records = readJsonlChunk(bytes, mapping.jsonl!, at, limits).records;
  }

  const reject = (rowNo: number | null, code: ErrorCode, externalId: string | undefined, message: string, raw: string | null): MappedRow => ({
    kind: 'rejected',
    reject: {
      row_no: rowNo,
      chunk_no: at.chunkNo,
      code,
      object_type: family,
      external_id: externalId ?? null,
      message,
      raw: raw !== null && containsPan(raw) ? WITHHELD : raw,
    },
  });

  async function* rows(): AsyncIterable<MappedRow> {
    try {
      for await (const record of records) {
        if (record.kind === 'bad_row') {
          yield reject(record.rowNo, 'svc:validation/schema', undefined, record.message, record.raw);
          continue;
        }
        const source = record.row;
        const row: SourceRow =
          source.kind === 'csv' ? { kind: 'csv', get: (column) => source.get(column), rowNo: record.rowNo } : { kind: 'jsonl', value: source.value, rowNo: record.rowNo };
        const assembled = assembleRow(assembly, row, { nullValues, scaleOf });
        if (assembled.kind === 'skipped') {
          yield { kind: 'skipped', rowNo: record.rowNo, chunkNo: record.chunkNo };
          continue;
        }
        if (assembled.kind === 'rejected') {
          yield reject(record.rowNo, assembled.code, assembled.externalId, assembled.message, record.raw);
          continue;
        }
        const checked = validateItem({ object: family, event: assembled.event }, context.validation);
        if (checked.ok) {
          yield { kind: 'valid', rowNo: record.rowNo, chunkNo: record.chunkNo, object: family, event: checked.event };
          continue;
        }
        // Paths relative to the event, as the mapping's targets name them.
        const message = checked.errors.map((e) => `${e.path.replace(/^event\./, '')}: ${e.message}`).join('; ');
        yield reject(record.rowNo, checked.code, checked.externalId, message, record.raw);
      }
    } catch (error) {
      if (!(error instanceof ChunkError)) throw error;
      // The rows before it stand; the chunk stops here, reported as one reject.
      yield reject(error.rowNo ?? null, 'svc:import/invalid_chunk', undefined, error.message, null);
    }
  }
  return { rows: rows(), fileHeader };
}
