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
import { assembleRow, externalIdOf, type SourceRow } from './mapping/assemble.ts';
import type { CompiledMapping } from './mapping/compile.ts';
import { ROW_NUMBER_SOURCE } from '../../schemas/imports/mapping.ts';

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
  // raw: the source row as a reject would show it (withheld when it holds a card number).
  | { kind: 'valid'; rowNo: number; chunkNo: number; object: Family; event: Envelope; raw: string }
  | { kind: 'skipped'; rowNo: number; chunkNo: number }
  | { kind: 'rejected'; reject: ImportReject };

// A source row holding a card number is never repeated back, in a report or anywhere else.
const WITHHELD = '(withheld: the row contains a full card number)';
// Rows between two yields to the event loop: a chunk is mapped in one go otherwise, and the API
// (dry-runs) must keep answering meanwhile.
const YIELD_EVERY = 500;
// PostgreSQL text holds neither U+0000 nor a lone surrogate.
const storable = (text: string) => text.replaceAll('\u0000', '').replace(/[\ud800-\udfff]/g, (c, i: number, all: string) => {
  const code = c.charCodeAt(0);
  const pairs = code < 0xdc00 ? /[\udc00-\udfff]/.test(all[i + 1] ?? '') : /[\ud800-\udbff]/.test(all[i - 1] ?? '');
  return pairs ? c : '\ufffd';
});

const reportable = (raw: string) => (containsPan(raw) ? WITHHELD : storable(raw));

export interface ChunkReading {
  rows: AsyncIterable<MappedRow>;
  // The CSV header record read from chunk 0, for later chunks (undefined for JSONL).
  fileHeader: () => string[] | undefined;
  // Once the rows are read: after a chunk-level problem past which the chunk's records could still
  // be counted (dialects/types.ts ChunkError), the row number the next chunk starts at; else
  // undefined (the rows read say where the next chunk starts).
  nextRowNo: () => number | undefined;
}

export function mapChunk(
  mapping: CompiledMapping,
  bytes: AsyncIterable<Uint8Array>,
  at: ChunkPosition,
  context: { validation: ValidationContext; limits?: ReadLimits },
): ChunkReading {
  const family = mapping.family;
  const nullValues = new Set(mapping.csv?.nullValues ?? mapping.jsonl?.nullValues ?? []);
  const assembly = { targets: mapping.targets, requiredObjects: mapping.requiredObjects, ...(mapping.document.row_filter ? { rowFilter: mapping.document.row_filter } : {}) };
  const scaleOf = (asset: string) => context.validation.registry.scaleOf(asset);
  const limits = context.limits ?? {};
  let records: AsyncIterable<SourceRecord>;
  let fileHeader: () => string[] | undefined = () => undefined;
  // The header's column names, once read, when the mapping's columns were not given up front
  // (compile checks those): a column the mapping names and the header lacks is the chunk's fault.
  let headerNames: () => string[] | undefined = () => undefined;
  if (mapping.csv) {
    const reader = readCsvChunk(bytes, mapping.csv, at, limits);
    records = reader.records;
    fileHeader = () => reader.fileHeader();
    if (!mapping.csv.columns) headerNames = () => reader.header();
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
      external_id: externalId === undefined || containsPan(externalId) ? null : storable(externalId),
      message: storable(message),
      raw: raw === null ? null : reportable(raw),
    },
  });

  // A mapped column the header does not have (a renamed export column, a changed case) reads as
  // empty on every row: an optional field silently lost, a row_filter that skips every row or
  // none. Checked at the chunk's first record, before any row of it is mapped; the chunk's records
  // are then still read, only to be counted, so the next chunk's rows keep their numbers.
  let headerChecked = false;
  const checkHeader = async (first: SourceRecord): Promise<void> => {
    if (headerChecked) return;
    headerChecked = true;
    const names = headerNames();
    if (!names) return;
    const missing = columnsNamed(mapping).filter((column) => !names.includes(column));
    if (missing.length > 0) throw new ChunkError(`mapping mismatch: the header has no column ${missing.join(', ')}`, undefined, at.chunkNo, await rowAfter(records, first.rowNo + 1));
  };

  let nextRowNo: number | undefined;
  async function* rows(): AsyncIterable<MappedRow> {
    try {
      const pause = pacer();
      for await (const record of records) {
        await checkHeader(record);
        await pause();
        if (record.kind === 'bad_row') {
          const fields = record.row;
          let externalId: string | undefined;
          try {
            externalId = fields && externalIdOf(assembly, { kind: 'csv', get: (column) => fields.get(column), rowNo: record.rowNo }, { nullValues, scaleOf });
          } catch {
            // Unreadable: the reject goes without it.
          }
          yield reject(record.rowNo, 'svc:validation/schema', externalId, record.message, record.raw);
          continue;
        }
        const source = record.row;
        const row: SourceRow =
          source.kind === 'csv' ? { kind: 'csv', get: (column) => source.get(column), rowNo: record.rowNo } : { kind: 'jsonl', value: source.value, rowNo: record.rowNo };
        let assembled: ReturnType<typeof assembleRow>;
        try {
          assembled = assembleRow(assembly, row, { nullValues, scaleOf });
        } catch {
          // A row the mapping cannot be evaluated on (a JSON value nested too deep to copy, say)
          // is that row's problem, never the chunk's.
          yield reject(record.rowNo, 'svc:validation/schema', undefined, 'the mapping could not be evaluated on this row', record.raw);
          continue;
        }
        if (assembled.kind === 'skipped') {
          yield { kind: 'skipped', rowNo: record.rowNo, chunkNo: record.chunkNo };
          continue;
        }
        if (assembled.kind === 'rejected') {
          yield reject(record.rowNo, assembled.code, assembled.externalId, assembled.message, record.raw);
          continue;
        }
        let checked: ReturnType<typeof validateItem>;
        try {
          checked = validateItem({ object: family, event: assembled.event }, context.validation);
        } catch {
          yield reject(record.rowNo, 'svc:validation/schema', undefined, 'the assembled event could not be checked', record.raw);
          continue;
        }
        if (checked.ok) {
          yield { kind: 'valid', rowNo: record.rowNo, chunkNo: record.chunkNo, object: family, event: checked.event, raw: reportable(record.raw) };
          continue;
        }
        // Paths relative to the event, as the mapping's targets name them.
        const message = checked.errors.map((e) => `${e.path.replace(/^event\./, '')}: ${e.message}`).join('; ');
        yield reject(record.rowNo, checked.code, checked.externalId, message, record.raw);
      }
    } catch (error) {
      if (!(error instanceof ChunkError)) throw error;
      nextRowNo = error.nextRowNo;
      // The rows before it stand; the chunk stops here, reported as one reject that says so: the
      // rows after it are in no count and no other reject. When they could not even be counted and
      // more chunks follow, the reject says that later row numbers may be off.
      const unread = `nothing after it in chunk ${error.chunkNo} was read`;
      const message = nextRowNo === undefined && at.more ? `${unread} or counted, so later row numbers may be off` : unread;
      yield reject(error.rowNo ?? null, 'svc:import/invalid_chunk', undefined, `${error.message}; ${message}`, null);
    }
  }
  return { rows: rows(), fileHeader, nextRowNo: () => nextRowNo };
}

// The number the record after a reader's last has, its records read from here on only to be counted
// (`next` when none is left); undefined when a chunk-level problem left some uncounted. A reader's
// records are a generator: iterating them again goes on where the caller stopped.
async function rowAfter(records: AsyncIterable<SourceRecord>, next: number): Promise<number | undefined> {
  const pause = pacer();
  try {
    for await (const record of records) {
      next = record.rowNo + 1;
      await pause();
    }
  } catch (error) {
    if (!(error instanceof ChunkError)) throw error;
    return error.nextRowNo;
  }
  return next;
}

// A pause for the event loop every YIELD_EVERY calls.
function pacer(): () => Promise<void> {
  let since = 0;
  return async () => {
    if (++since < YIELD_EVERY) return;
    since = 0;
    await new Promise((resolve) => setImmediate(resolve));
  };
}

// The sources a mapping reads: its rules' `from` (each part of a joined one), its money parts' and
// its row_filter's, the pseudo-column @row_no among them when it is read.
function sourcesNamed(mapping: CompiledMapping): Set<string> {
  const named = new Set<string>();
  const add = (from: string | readonly string[] | undefined) => {
    for (const source of typeof from === 'string' ? [from] : (from ?? [])) named.add(source);
  };
  for (const { rule } of mapping.targets) {
    add(rule.from);
    add(rule.value?.from);
    add(rule.asset?.from);
  }
  add(mapping.document.row_filter?.from);
  return named;
}

// The source columns a mapping reads (@row_no is no column).
function columnsNamed(mapping: CompiledMapping): string[] {
  return [...sourcesNamed(mapping)].filter((source) => source !== ROW_NUMBER_SOURCE);
}

// Whether a mapping reads the row's number (@row_no), usually into its ids.
export function readsRowNumber(mapping: CompiledMapping): boolean {
  return sourcesNamed(mapping).has(ROW_NUMBER_SOURCE);
}
