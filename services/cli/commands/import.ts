import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { readJsonFile } from '../files.ts';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { isKeySecret, SvcApiError, SvcError, type Import, type ImportDryRunReport, type ImportMapping, type SvcClient } from '../../../clients/typescript/src/index.ts';
import { isDateTime } from '../../../schemas/primitives/timestamp.ts';
import { UsageError } from '../context.ts';
import { chunkFormatOf, chunkStream, RecordTooLargeError } from '../import-client/chunks.ts';
import { describeError, importClient, type ClientTestHooks } from '../import-client/client.ts';
import { ProgressLine, renderLandingBar, renderLandingPlain, renderUploadBar, renderUploadPlain, type ProgressStream } from '../import-client/progress.ts';

type Print = (line: string) => void;

export const IMPORT_USAGE = `usage: svc import --mapping <mapping.json> --file <path> [--dry-run] [--go-live <RFC 3339>] [--backfill-from <RFC 3339>]
                  [--chunk-bytes <n>] [--url <base URL>] [--key-id <id>] [--key-secret <secret>]
  Imports a historical file through the API (an ingest key): uploads it in chunks of whole records,
  submits it and follows its landing; rejected rows are written to <file>.rejects.csv.
  --dry-run          upload, print the whole-file dry-run report, then cancel the import (nothing lands)
  --go-live          rows at or after it belong to live ingest (default: now)
  --backfill-from    rows before it are too old (default: the server's backfill window before --go-live)
  --chunk-bytes      largest chunk uploaded (default 3145728, under the server's 4 MiB payload cap)
  --url              the API (default $SVC_URL, else http://127.0.0.1:8080)
  --key-id, --key-secret   the ingest key (default $SVC_KEY_ID, $SVC_KEY_SECRET; prefer the environment for the secret)
  exit status: 0 imported (or dry run) with no rejects, 1 rows were rejected, 2 the import failed or could not run`;

export const DEFAULT_CHUNK_BYTES = 3 * 1024 * 1024;
const MAX_CHUNK_BYTES = 64 * 1024 * 1024;
const MAX_CHUNKS = 100_000;
const POLL_MS = 1000;
const REJECTS_SHOWN = 20;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export interface ImportOptions {
  mapping: string;
  file: string;
  dryRun: boolean;
  goLive: string;
  backfillFrom?: string;
  chunkBytes: number;
  url: string;
  keyId: string;
  keySecret: string;
}

export interface ImportIo {
  print: Print;
  /** Progress and notes (stderr). */
  progress: ProgressStream;
  env: NodeJS.ProcessEnv;
  now?: () => Date;
  /** For tests: the SDK client's fetch, sleep and randomness. */
  http?: ClientTestHooks;
}

// A key secret is base64url text and begins with '-' one time in 64; parseArgs takes such a value
// for an option and refuses `--key-secret -Xy…`. The token after --key-secret is its value.
function joinSecretValue(args: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) joined.push(args[i] === '--key-secret' && i + 1 < args.length ? `--key-secret=${args[++i]}` : args[i]!);
  return joined;
}

export function parseImportArgs(args: string[], env: NodeJS.ProcessEnv, now: Date = new Date()): ImportOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: joinSecretValue(args),
      allowPositionals: false,
      strict: true,
      options: {
        mapping: { type: 'string' },
        file: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        'go-live': { type: 'string' },
        'backfill-from': { type: 'string' },
        'chunk-bytes': { type: 'string' },
        url: { type: 'string' },
        'key-id': { type: 'string' },
        'key-secret': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${IMPORT_USAGE}`);
  }
  const need = (value: string | undefined, what: string): string => {
    if (value === undefined || value === '') throw new UsageError(`${what} is required\n${IMPORT_USAGE}`);
    return value;
  };
  const mapping = need(values.mapping, '--mapping');
  const file = need(values.file, '--file');
  const goLive = values['go-live'] ?? now.toISOString();
  for (const [flag, value] of [['--go-live', goLive], ['--backfill-from', values['backfill-from']]] as const) {
    if (value !== undefined && !isDateTime(value)) throw new UsageError(`${flag} must be an RFC 3339 date-time with an offset (e.g. 2026-09-01T00:00:00Z), not ${value}`);
  }
  let chunkBytes = DEFAULT_CHUNK_BYTES;
  if (values['chunk-bytes'] !== undefined) {
    const text = values['chunk-bytes'];
    chunkBytes = /^[1-9][0-9]*$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes > MAX_CHUNK_BYTES) throw new UsageError(`--chunk-bytes must be a whole number of bytes, 1 to ${MAX_CHUNK_BYTES}`);
  }
  const url = values.url ?? (env.SVC_URL || 'http://127.0.0.1:8080');
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new UsageError(`--url must be an http(s) URL, not ${url}`);
  }
  const keyId = need(values['key-id'] ?? env.SVC_KEY_ID, 'an API key id (--key-id or SVC_KEY_ID)');
  const keySecret = need(values['key-secret'] ?? env.SVC_KEY_SECRET, 'the API key secret (--key-secret or SVC_KEY_SECRET)');
  // The SDK refuses any other shape; said here as a usage error, without echoing the value.
  if (!isKeySecret(keySecret)) {
    throw new UsageError('the API key secret (--key-secret or SVC_KEY_SECRET) is not a key secret as issued: 43 base64url characters');
  }
  return {
    mapping,
    file,
    dryRun: values['dry-run'] === true,
    goLive,
    ...(values['backfill-from'] !== undefined ? { backfillFrom: values['backfill-from'] } : {}),
    chunkBytes,
    url,
    keyId,
    keySecret,
  };
}

/** A problem that stops the import, already worded for the operator. */
class ImportFailure extends Error {}

class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/** `svc import`: returns the exit status (0 no rejects, 1 rejects, 2 failure). */
export async function importCommand(args: string[], io: ImportIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.print(IMPORT_USAGE);
    return 0;
  }
  const options = parseImportArgs(args, io.env, io.now?.() ?? new Date());
  const mapping = await readMapping(options.mapping);
  const size = await fileSize(options.file);
  const progress = new ProgressLine(io.progress);
  const note = (line: string) => progress.note(line);
  const client = importClient(options, note, io.http);
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort(new Interrupted());
  process.once('SIGINT', onSigint);

  let imported: Import | undefined;
  let submitted = false;
  try {
    // Not retried (no Idempotency-Key on this write): a failure ends the run.
    imported = await client.imports.create(
      { mapping: mapping as ImportMapping, go_live_at: options.goLive, ...(options.backfillFrom ? { backfill_from: options.backfillFrom } : {}) },
      { signal: interrupt.signal },
    );
    const id = imported.import_id;
    note(`import ${id} created (${imported.family}; rows from ${imported.backfill_from} up to ${imported.go_live_at})`);
    for (const warning of imported.warnings) note(`warning: ${warning}`);

    const chunkCount = await upload(client, id, options, mapping, size, progress, interrupt.signal);

    if (options.dryRun) {
      // Stores nothing, so repeating it is harmless; the whole file may take a while.
      const report = await client.imports.dryRun(id, { safeToRepeat: true, timeoutMs: 0, signal: interrupt.signal });
      printDryRun(io.print, id, chunkCount, report);
      await cancel(client, id, note);
      return report.rejected > 0 ? 1 : 0;
    }

    await client.imports.submit(id, { chunk_count: chunkCount }, { signal: interrupt.signal });
    submitted = true;
    note(`import ${id} submitted: ${chunkCount} chunk${chunkCount === 1 ? '' : 's'}`);
    const done = await follow(client, id, chunkCount, progress, interrupt.signal);
    printSummary(io.print, done);
    if (done.rejected > 0) {
      const path = `${options.file}.rejects.csv`;
      await downloadRejects(client, id, path, interrupt.signal);
      io.print(`${done.rejected} rejected row${done.rejected === 1 ? '' : 's'}: report written to ${path}`);
    }
    if (done.state !== 'completed') return 2;
    return done.rejected > 0 ? 1 : 0;
  } catch (error) {
    progress.done();
    const id = imported?.import_id;
    if (error instanceof Interrupted || interrupt.signal.aborted) {
      if (id && submitted) {
        note(`interrupted: import ${id} goes on landing on the server (GET /v1/imports/${id})`);
      } else {
        note('interrupted');
        if (id) await cancel(client, id, note);
      }
      return 130;
    }
    if (!(error instanceof SvcError || error instanceof RecordTooLargeError || error instanceof ImportFailure || isFsError(error))) throw error;
    const lines = describeError(error);
    note(`svc import: ${lines[0]}`);
    for (const line of lines.slice(1)) note(line);
    if (id && !submitted) await cancel(client, id, note);
    else if (id) note(`import ${id} was submitted; follow it with GET /v1/imports/${id}`);
    return 2;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

async function readMapping(path: string): Promise<unknown> {
  return readJsonFile(path, `--mapping ${path}`);
}

async function fileSize(path: string): Promise<number> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new UsageError(`--file ${path}: ${(error as Error).message}`);
  }
  if (!info.isFile()) throw new UsageError(`--file ${path} is not a regular file`);
  if (info.size === 0) throw new UsageError(`--file ${path} is empty`);
  return info.size;
}

// Streams the file through the chunker and PUTs each chunk (retried: a PUT of the same chunk
// replaces it). Returns the chunk count.
async function upload(client: SvcClient, id: string, options: ImportOptions, mapping: unknown, size: number, progress: ProgressLine, signal: AbortSignal): Promise<number> {
  const format = chunkFormatOf(mapping);
  const contentType = format.kind === 'csv' ? 'text/csv' : 'application/x-ndjson';
  const started = Date.now();
  let sent = 0;
  let chunks = 0;
  const show = (force = false) => {
    const state = { sentBytes: sent, totalBytes: size, chunks, elapsedMs: Date.now() - started };
    progress.show({ bar: (w) => renderUploadBar(state, w), plain: () => renderUploadPlain(state) }, force);
  };
  show();
  const source = createReadStream(options.file, { highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of chunkStream(source, format, options.chunkBytes)) {
      if (chunk.no >= MAX_CHUNKS) throw new ImportFailure(`the file needs more than ${MAX_CHUNKS} chunks of ${options.chunkBytes} bytes: raise --chunk-bytes`);
      try {
        await client.imports.uploadChunk(id, chunk.no, chunk.body, { safeToRepeat: true, contentType, signal });
      } catch (error) {
        if (error instanceof SvcApiError && error.status === 413) {
          throw new ImportFailure(`chunk ${chunk.no} (${chunk.body.length} bytes) is over the server's payload cap: lower --chunk-bytes (${describeError(error)[0]})`);
        }
        throw error;
      }
      sent += chunk.body.length - chunk.repeatedBytes;
      chunks++;
      show();
    }
  } finally {
    source.destroy();
  }
  show(true);
  progress.done();
  return chunks;
}

// Polls the import every second until it ends, showing chunks landed and rows.
async function follow(client: SvcClient, id: string, chunkCount: number, progress: ProgressLine, signal: AbortSignal): Promise<Import> {
  for (;;) {
    // A read: retried (the client has retryReads).
    const view = await client.imports.retrieve(id, { signal });
    const state = {
      state: view.state,
      chunksLanded: view.chunks_landed,
      chunkCount: view.chunk_count ?? chunkCount,
      rowsRead: view.rows_read,
      accepted: view.accepted,
      rejected: view.rejected,
    };
    const ended = TERMINAL.has(view.state);
    progress.show({ bar: (w) => renderLandingBar(state, w), plain: () => renderLandingPlain(state) }, ended);
    if (ended) {
      progress.done();
      return view;
    }
    await sleep(POLL_MS, undefined, { signal });
  }
}

async function cancel(client: SvcClient, id: string, note: (line: string) => void): Promise<void> {
  try {
    await client.imports.cancel(id);
    note(`import ${id} cancelled`);
  } catch (error) {
    const why = error instanceof Error ? describeError(error)[0] : String(error);
    note(`import ${id} could not be cancelled (${why}); cancel it with POST /v1/imports/${id}/cancel`);
  }
}

// The reject report, streamed to disk (a .part file renamed once whole).
async function downloadRejects(client: SvcClient, id: string, path: string, signal: AbortSignal): Promise<void> {
  // The SDK answers with the body unread once the headers came in time: it is streamed to disk.
  const body = await client.imports.rejectsCsv(id, { signal });
  const part = `${path}.part`;
  try {
    await pipeline(Readable.fromWeb(body), createWriteStream(part), { signal });
    await rename(part, path);
  } catch (error) {
    await rm(part, { force: true });
    if (error instanceof Error && !signal.aborted) throw new ImportFailure(`the reject report could not be saved to ${path}: ${error.message}`);
    throw error;
  }
}

function printSummary(print: Print, view: Import): void {
  print(`import ${view.import_id} ${view.state}${view.failure ? `: ${view.failure}` : ''}`);
  print(
    table([
      ['rows read', String(view.rows_read)],
      ['accepted', String(view.accepted)],
      ['duplicates', String(view.duplicates)],
      ['rejected', String(view.rejected)],
      ['skipped', String(view.skipped)],
    ], '  '),
  );
}

function printDryRun(print: Print, id: string, chunkCount: number, report: ImportDryRunReport): void {
  print(`dry run of import ${id} (${report.family}, ${chunkCount} chunk${chunkCount === 1 ? '' : 's'}): nothing landed`);
  print(
    table([
      ['rows read', String(report.rows_read)],
      ['valid', String(report.valid)],
      ['rejected', String(report.rejected)],
      ['skipped', String(report.skipped)],
    ], '  '),
  );
  if (report.warnings.length > 0) {
    print('warnings:');
    for (const w of report.warnings) print(`  - ${w}`);
  }
  if (report.rejects.length > 0) {
    const shown = report.rejects.slice(0, REJECTS_SHOWN);
    print(`first rejects (${shown.length} of ${report.rejected}${report.rejects_truncated ? '+' : ''}):`);
    print(
      table(
        [
          ['ROW', 'CHUNK', 'CODE', 'EXTERNAL ID', 'MESSAGE'],
          ...shown.map((r) => [r.row_no === null ? '-' : String(r.row_no), String(r.chunk_no), r.code, r.external_id ?? '-', oneLine(r.message, 100)]),
        ],
        '  ',
      ),
    );
  }
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(rows: string[][], indent = ''): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => indent + row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function isFsError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}
