-- Historical imports (pipelines/imports): an import holds its compiled mapping and its window;
-- the file arrives as numbered chunks staged here until the import is submitted; the import
-- worker lands them in order through the same acceptance statement as live ingest and records a
-- reject per row it could not land. next_chunk is the worker's position: a chunk's events, its
-- rejects and the counts after it commit in one transaction, so a restarted worker resumes at the
-- first chunk not yet landed and never lands a row twice.
CREATE TABLE imports (
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
  import_id      uuid PRIMARY KEY,
  family         text NOT NULL,
  -- json, not jsonb: the document as sent, its targets in the customer's order (evaluated in it).
  mapping        json NOT NULL,
  state          text NOT NULL CHECK (state IN ('created', 'submitted', 'processing', 'completed', 'failed', 'cancelled')),
  -- Rows whose occurred_at is at or after the go-live watermark belong to live ingest, and rows
  -- before the backfill window's start are too old: both are refused as timestamp_out_of_range.
  go_live_at     timestamptz NOT NULL,
  backfill_from  timestamptz NOT NULL,
  chunk_count    integer,
  next_chunk     integer NOT NULL DEFAULT 0,
  next_row_no    bigint NOT NULL DEFAULT 1,
  file_header    text[],
  rows_read      bigint NOT NULL DEFAULT 0,
  accepted       bigint NOT NULL DEFAULT 0,
  duplicates     bigint NOT NULL DEFAULT 0,
  rejected       bigint NOT NULL DEFAULT 0,
  skipped        bigint NOT NULL DEFAULT 0,
  failure        text,
  -- Attempts at the next chunk that failed unexpectedly (not a row or chunk problem); past a few,
  -- the import fails rather than block the ones behind it.
  landing_failures integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  submitted_at   timestamptz,
  completed_at   timestamptz
);
CREATE INDEX imports_tenant ON imports (tenant_id, created_at DESC, import_id DESC);
CREATE INDEX imports_waiting ON imports (submitted_at) WHERE state IN ('submitted', 'processing');

-- A chunk as uploaded; dropped once landed.
CREATE TABLE import_chunks (
  import_id    uuid NOT NULL REFERENCES imports (import_id),
  chunk_no     integer NOT NULL CHECK (chunk_no >= 0),
  body         bytea NOT NULL,
  sha256       bytea NOT NULL,
  uploaded_at  timestamptz NOT NULL,
  PRIMARY KEY (import_id, chunk_no)
);

CREATE TABLE import_rejects (
  import_id    uuid NOT NULL REFERENCES imports (import_id),
  seq          bigint NOT NULL,
  row_no       bigint,
  chunk_no     integer NOT NULL,
  code         text NOT NULL,
  external_id  text,
  message      text NOT NULL,
  raw          text,
  PRIMARY KEY (import_id, seq)
);
