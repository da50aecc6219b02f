-- The sets of migration 0053 again, empty (a set only ever lived for an hour), with their keys,
-- cascades and index; written compactly, as a down file restates what its up file dropped.
CREATE TABLE reconciliation_item_sets (
  tenant_id text NOT NULL, set_id uuid NOT NULL, reconciliation_id uuid NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
  through_at timestamptz, through_id uuid, complete boolean NOT NULL DEFAULT false, PRIMARY KEY (tenant_id, set_id),
  FOREIGN KEY (tenant_id, reconciliation_id) REFERENCES reconciliations (tenant_id, reconciliation_id) ON DELETE CASCADE
);
CREATE INDEX reconciliation_item_sets_created ON reconciliation_item_sets (created_at);
CREATE TABLE reconciliation_set_items (
  tenant_id text NOT NULL, set_id uuid NOT NULL, at timestamptz NOT NULL, event_id uuid NOT NULL, external_id text NOT NULL,
  occurred_at timestamptz NOT NULL, received_at timestamptz NOT NULL, status text NOT NULL, type text NOT NULL, value text NOT NULL,
  reason text NOT NULL, related text, PRIMARY KEY (tenant_id, set_id, at, event_id),
  FOREIGN KEY (tenant_id, set_id) REFERENCES reconciliation_item_sets (tenant_id, set_id) ON DELETE CASCADE
);
