-- Declarations a tenant expects (docs/decisions/0025): one per UTC day for a scope and asset,
-- due a number of minutes after the day ends. A day whose declaration has not arrived when due is
-- a miss (coverage.degraded); the declaration arriving later recovers it (coverage.recovered).
CREATE TABLE reconciliation_expectations (
  tenant_id          text NOT NULL REFERENCES tenants (tenant_id),
  expectation_id     uuid PRIMARY KEY,
  subject_kind       text NOT NULL CHECK (subject_kind IN ('tenant', 'account', 'party')),
  subject_id         text,
  asset              text NOT NULL,
  due_after_minutes  integer NOT NULL CHECK (due_after_minutes BETWEEN 0 AND 10080),
  created_at         timestamptz NOT NULL,
  -- The first day not yet checked (days before it were checked or predate the expectation).
  next_day           date NOT NULL,
  -- Due for checking: the end of next_day plus due_after_minutes, so the sweep reads by index.
  next_due_at        timestamptz NOT NULL,
  deleted_at         timestamptz
);
CREATE UNIQUE INDEX reconciliation_expectations_scope ON reconciliation_expectations (tenant_id, subject_kind, coalesce(subject_id, ''), asset) WHERE deleted_at IS NULL;
CREATE INDEX reconciliation_expectations_due ON reconciliation_expectations (next_due_at) WHERE deleted_at IS NULL;

CREATE TABLE reconciliation_expectation_misses (
  tenant_id       text NOT NULL,
  expectation_id  uuid NOT NULL REFERENCES reconciliation_expectations (expectation_id),
  day             date NOT NULL,
  degraded_at     timestamptz NOT NULL,
  recovered_at    timestamptz,
  recovered_by    uuid,
  PRIMARY KEY (expectation_id, day)
);
CREATE INDEX reconciliation_expectation_misses_open ON reconciliation_expectation_misses (tenant_id, day) WHERE recovered_at IS NULL;
