-- Webhooks (services/webhooks): registered endpoints, one delivery per (event, endpoint) and every
-- attempt of each delivery. outgoing_events stays the outbox that state changes write into; the
-- delivery worker fans each event out to the endpoints subscribed to it.

-- A UUIDv7 for rows made inside a statement (the fan-out): the instant in the first 48 bits, then
-- random bits, with the version and variant of RFC 9562. gen_random_uuid already sets variant 10
-- and version 0100; setting bits 4 and 5 of byte 6 turns the version into 0111.
CREATE FUNCTION svc_uuidv7(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(
           set_bit(set_bit(
             overlay(uuid_send(gen_random_uuid())
                     PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                     FROM 1 FOR 6),
             52, 1), 53, 1),
           'hex')::uuid
$$;

-- Secrets are sealed (AES-256-GCM) under the master key, bound to the endpoint's id. During a
-- rotation's overlap the previous secret still signs every delivery.
CREATE TABLE webhook_endpoints (
  tenant_id                    text NOT NULL REFERENCES tenants (tenant_id),
  endpoint_id                  uuid PRIMARY KEY,
  url                          text NOT NULL,
  channel                      text NOT NULL CHECK (channel IN ('compliance', 'operational')),
  event_types                  text[] NOT NULL CHECK (cardinality(event_types) > 0),
  description                  text,
  status                       text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  secret_sealed                bytea NOT NULL,
  previous_secret_sealed       bytea,
  previous_secret_valid_until  timestamptz,
  -- When a webhook.test through the delivery worker was last answered with 2xx in time.
  verified_at                  timestamptz,
  created_at                   timestamptz NOT NULL,
  updated_at                   timestamptz NOT NULL,
  deleted_at                   timestamptz
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at, endpoint_id) WHERE deleted_at IS NULL;

-- The outbox rows not yet fanned out. Small at any moment, so the partial index stays small.
-- Events enqueued before webhooks existed had no endpoint to go to: they count as fanned out, so
-- the first endpoint registered does not receive the whole history.
ALTER TABLE outgoing_events ADD COLUMN fanned_out_at timestamptz;
UPDATE outgoing_events SET fanned_out_at = created_at;
CREATE INDEX outgoing_events_unfanned ON outgoing_events (created_at) WHERE fanned_out_at IS NULL;

-- One envelope to one endpoint. attempts counts claimed attempts; a pending delivery is due at
-- next_attempt_at, which a worker moves past its attempt timeout when it claims the delivery
-- (a lease: a worker that dies mid-attempt leaves the delivery due again). max_attempts is 1 for
-- webhook.test probes and null for events, retried until deadline_at, then dead-lettered.
CREATE TABLE webhook_deliveries (
  tenant_id        text NOT NULL,
  delivery_id      uuid PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (endpoint_id),
  envelope_id      uuid NOT NULL REFERENCES outgoing_events (envelope_id),
  event_type       text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'dead_lettered', 'cancelled')),
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer,
  next_attempt_at  timestamptz,
  deadline_at      timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  replay_of        uuid
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id, created_at DESC, delivery_id DESC);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status);

-- Every attempt as it happened. response_excerpt keeps only the first bytes of a response body.
CREATE TABLE webhook_attempts (
  tenant_id         text NOT NULL,
  delivery_id       uuid NOT NULL REFERENCES webhook_deliveries (delivery_id),
  attempt           integer NOT NULL,
  started_at        timestamptz NOT NULL,
  latency_ms        integer NOT NULL,
  response_status   integer,
  error             text,
  response_excerpt  text,
  next_retry_at     timestamptz,
  PRIMARY KEY (delivery_id, attempt)
);
