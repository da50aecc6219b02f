-- Reconciliations (pipelines/reconcile): a customer's declared control total for a scope and an
-- event-time period, and every distinct result of comparing it with what the canonical model
-- holds. Declarations are immutable; a correction is a new declaration naming the one it corrects.
CREATE TABLE reconciliations (
  tenant_id        text NOT NULL REFERENCES tenants (tenant_id),
  reconciliation_id uuid PRIMARY KEY,
  subject_kind     text NOT NULL CHECK (subject_kind IN ('tenant', 'account', 'party')),
  subject_id       text,
  direction        text NOT NULL CHECK (direction IN ('in', 'out', 'both')),
  asset            text NOT NULL,
  scale            smallint NOT NULL,
  period_from      timestamptz NOT NULL,
  from_inclusive   boolean NOT NULL,
  period_to        timestamptz NOT NULL,
  to_inclusive     boolean NOT NULL,
  declared_count   bigint NOT NULL,
  declared_sum     numeric(38, 0) NOT NULL,
  declared_statuses jsonb,
  corrects         uuid REFERENCES reconciliations (reconciliation_id),
  created_at       timestamptz NOT NULL,
  -- The latest result, repeated here for listing and filtering.
  status           text NOT NULL CHECK (status IN ('matched', 'mismatched')),
  checked_at       timestamptz NOT NULL
);
CREATE INDEX reconciliations_tenant ON reconciliations (tenant_id, created_at DESC, reconciliation_id DESC);

CREATE TABLE reconciliation_results (
  reconciliation_id uuid NOT NULL REFERENCES reconciliations (reconciliation_id),
  seq              integer NOT NULL,
  computed_at      timestamptz NOT NULL,
  status           text NOT NULL,
  observed_count   bigint NOT NULL,
  observed_sum     numeric(38, 0) NOT NULL,
  observed_statuses jsonb NOT NULL,
  explanation      jsonb NOT NULL,
  PRIMARY KEY (reconciliation_id, seq)
);

-- Observed totals read a tenant's movements over an event-time period (an account's among them:
-- one index, not one per leg, since every index slows the canonical pipeline's inserts).
CREATE INDEX canonical_movements_occurred ON canonical_movements (tenant_id, occurred_at);

-- The events of a period not (yet) counted (pending, held, quarantined, rejected) explain a
-- difference; found by tenant and event time. Neither column ever changes, so the pipeline's
-- status updates stay HOT.
CREATE INDEX inbox_events_occurred ON inbox_events (tenant_id, object, occurred_at);

-- Set when a movement of the reconciliation's tenant and period was canonicalised after its last
-- comparison (the reconcile consumer of canonical change records), cleared by the next one.
ALTER TABLE reconciliations ADD COLUMN stale boolean NOT NULL DEFAULT false;
CREATE INDEX reconciliations_stale ON reconciliations (checked_at) WHERE stale;
