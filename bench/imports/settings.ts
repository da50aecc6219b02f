import { elapsedLog } from '../lib/log.ts';
import { positiveInteger, positiveNumber } from '../lib/options.ts';

// The knobs and fixed shape of bench/imports (see its header), read once from the environment.

// Rows of the generated CSV (the import side lands all of them).
export const ROWS = positiveInteger('IMPORT_ROWS', 1_000_000);
// Rows sent as batches for the baseline: the same events as the first BASELINE_ROWS rows of the
// file (all of them unless capped); rows/s is what is compared.
export const BASELINE_ROWS = Math.min(ROWS, positiveInteger('IMPORT_BASELINE_ROWS', ROWS));
// Upload chunks are cut at the last line break at or before this many bytes (the payload cap is 4 MiB).
export const CHUNK_BYTES = positiveInteger('IMPORT_CHUNK_BYTES', 3 * 1024 * 1024);
// How long the worker may take to land the file before the bench gives up.
export const LAND_TIMEOUT_MS = positiveNumber('IMPORT_LAND_TIMEOUT_S', 1800) * 1000;

export const ACCOUNTS = 2_000;
export const HISTORY_DAYS = 90;
export const BATCH_SIZE = 1000;
// As bench/ingest (b) and bench/pipeline: enough requests in flight that the API's parsing and
// validation of one batch overlaps PostgreSQL's insert of another on the 2 cores, few enough that
// they do not just queue (see the header of bench/imports.ts).
export const BATCH_CONNECTIONS = 4;

export const RSS_INTERVAL_MS = 100;
export const POLL_MS = 200;
export const ACTIVITY_INTERVAL_MS = 100;
export const PROGRESS_EVERY_MS = 5_000;
export const RSS_LIMIT_MB = 300;
export const TARGET_RATIO = 0.7;
// How many rows of each side are read back and compared event for event (external_id aside).
export const SAME_EVENT_SAMPLES = 200;

// external_id prefixes: the file's rows and the baseline's batches are the same events under
// different ids, so that neither side sees the other's rows as duplicates.
export const IMPORT_PREFIX = 'imp-';
export const BATCH_PREFIX = 'bat-';

// application_name of the API's, the import worker's and this process's database connections, to
// tell them apart in pg_stat_activity (set through PGAPPNAME, which node-postgres reads).
export const API_APPLICATION = 'bench-api';
export const WORKER_APPLICATION = 'bench-import-worker';
export const MONITOR_APPLICATION = 'bench-imports-monitor';

export const log = elapsedLog();
