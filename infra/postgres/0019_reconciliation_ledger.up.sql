-- Reconciliations an operations team can close (docs/decisions/0012, 0024, 0025): what a
-- declaration counts (statuses, basis, scope filters), its materiality threshold, the customer's
-- reference that makes a keyless retry safe, and the breaks a mismatch opens.

-- Declarations made before this migration counted every status: they keep doing so.
ALTER TABLE reconciliations
  ADD COLUMN counted_statuses text[] NOT NULL DEFAULT '{completed,pending,failed,reversed}',
  ADD COLUMN basis text NOT NULL DEFAULT 'occurred' CHECK (basis IN ('occurred', 'recorded')),
  -- Narrowing filters, null when absent: movement types, rails, a counterparty, an import.
  ADD COLUMN movement_types text[],
  ADD COLUMN rails text[],
  ADD COLUMN counterparty text,
  ADD COLUMN import_id uuid,
  -- Materiality: an absolute difference in minor units of the asset, or a fraction of the declared
  -- sum in basis points (at most one of the two), and a count difference.
  ADD COLUMN tolerance_minor numeric(38, 0),
  ADD COLUMN tolerance_bps integer,
  ADD COLUMN tolerance_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN customer_reference text,
  -- SHA-256 of the declaration as parsed, to tell a repeat from a different declaration.
  ADD COLUMN request_hash bytea;
ALTER TABLE reconciliations ALTER COLUMN counted_statuses SET DEFAULT '{completed}';

CREATE UNIQUE INDEX reconciliations_reference ON reconciliations (tenant_id, customer_reference) WHERE customer_reference IS NOT NULL;

-- A new movement marks stale only the declarations of its tenant and asset whose period can hold it.
CREATE INDEX reconciliations_scope ON reconciliations (tenant_id, asset, period_from);

-- Totals by recorded (booking) time read movements by the time the service received them.
CREATE INDEX canonical_movements_received ON canonical_movements (tenant_id, received_at);

-- A mismatch opens a break; people acknowledge it, comment on it and resolve it. One break at a
-- time is open per reconciliation (a resolved break stays as the record of what was done).
CREATE TABLE reconciliation_breaks (
  tenant_id          text NOT NULL,
  break_id           uuid PRIMARY KEY,
  reconciliation_id  uuid NOT NULL REFERENCES reconciliations (reconciliation_id),
  state              text NOT NULL CHECK (state IN ('open', 'acknowledged', 'resolved')),
  opened_at          timestamptz NOT NULL,
  opened_count_difference bigint NOT NULL,
  opened_sum_difference numeric(38, 0) NOT NULL,
  acknowledged_by    text,
  acknowledged_at    timestamptz,
  resolved_by        text,
  resolved_at        timestamptz,
  resolution         text,
  updated_at         timestamptz NOT NULL
);
CREATE UNIQUE INDEX reconciliation_breaks_unresolved ON reconciliation_breaks (reconciliation_id) WHERE state <> 'resolved';
CREATE INDEX reconciliation_breaks_tenant ON reconciliation_breaks (tenant_id, opened_at DESC, break_id DESC);

CREATE TABLE reconciliation_break_comments (
  tenant_id   text NOT NULL,
  break_id    uuid NOT NULL REFERENCES reconciliation_breaks (break_id),
  comment_id  uuid NOT NULL,
  author      text NOT NULL,
  created_at  timestamptz NOT NULL,
  body        text NOT NULL,
  PRIMARY KEY (break_id, comment_id)
);

-- Per-status sums and the base-asset total of a result ({status_sums, base_sum}).
ALTER TABLE reconciliation_results ADD COLUMN observed_detail jsonb;
