-- Transactional ingest: the inbox (every accepted event, raw), the outbox (the processing
-- obligation the pipelines read as an ordered log), stage history, idempotency keys and the
-- per-tenant rate-limit buckets.

-- NULL means the service default (SVC_RATE_LIMIT_CAPACITY / SVC_RATE_LIMIT_REFILL_PER_S).
ALTER TABLE tenants
  ADD COLUMN rate_limit_capacity integer CHECK (rate_limit_capacity >= 1000),
  ADD COLUMN rate_limit_refill_per_s double precision CHECK (rate_limit_refill_per_s > 0);

-- One row per accepted event. The dedup key is (tenant, object, external_id, sequence) with NULL
-- equal to NULL: facts carry no sequence, so for them it is (tenant, object, external_id).
CREATE TABLE inbox_events (
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  event_id        uuid NOT NULL,
  object          text NOT NULL,
  external_id     text NOT NULL,
  sequence        bigint,
  raw_event       bytea NOT NULL,
  content_hash    bytea NOT NULL CHECK (length(content_hash) = 32),
  received_at     timestamptz NOT NULL,
  occurred_at     timestamptz NOT NULL,
  correlation_id  text,
  import_id       uuid,
  historical      boolean NOT NULL DEFAULT false,
  status          text NOT NULL DEFAULT 'pending',
  status_reason   jsonb,
  rejection       jsonb,
  attempts        integer NOT NULL DEFAULT 0,
  terminal_at     timestamptz,
  PRIMARY KEY (tenant_id, event_id),
  CONSTRAINT inbox_events_dedup UNIQUE NULLS NOT DISTINCT (tenant_id, object, external_id, sequence)
) WITH (fillfactor = 60); -- room on each page for the pipeline's status updates to stay HOT

-- The processing obligation, written in the acceptance transaction. Position orders the log;
-- writer_xid lets readers wait for transactions that took a lower position but commit later.
CREATE TABLE outbox (
  position       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id      text NOT NULL,
  event_id       uuid NOT NULL,
  topic          text NOT NULL,
  partition_key  text NOT NULL,
  created_at     timestamptz NOT NULL,
  writer_xid     xid8 NOT NULL DEFAULT pg_current_xact_id()
);

CREATE TABLE event_stages (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id    text NOT NULL,
  event_id     uuid NOT NULL,
  stage        text NOT NULL,
  status       text NOT NULL,
  at           timestamptz NOT NULL,
  worker       text,
  duration_ms  integer,
  detail       jsonb
);
CREATE INDEX event_stages_event ON event_stages (tenant_id, event_id, id);

-- Stored responses of ingest requests that carried an Idempotency-Key, scoped to tenant,
-- endpoint and key. A row past expires_at is treated as absent and swept.
CREATE TABLE idempotency_keys (
  tenant_id        text NOT NULL,
  endpoint         text NOT NULL,
  idempotency_key  text NOT NULL,
  request_hash     bytea NOT NULL,
  status_code      integer NOT NULL,
  content_type     text NOT NULL,
  response_body    bytea NOT NULL,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, endpoint, idempotency_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- Token buckets, one per tenant, shared by every API process. Unlogged: a crash refills the
-- buckets, which is harmless, and taking tokens never waits for a WAL flush.
CREATE UNLOGGED TABLE rate_limit_buckets (
  tenant_id     text PRIMARY KEY,
  tokens        double precision NOT NULL,
  refreshed_at  timestamptz NOT NULL,
  -- Tokens available to the last UPDATE before it deducted: RETURNING cannot show the old row on
  -- PostgreSQL 15, and the caller needs it to tell which takes were granted.
  last_available  double precision NOT NULL DEFAULT 0
);
