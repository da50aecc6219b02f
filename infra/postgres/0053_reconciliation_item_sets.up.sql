-- The movement items of a reconciliation as one listing pages through them
-- (services/reconciliations/item-sets.ts). Finding them compares the whole period; a listing did
-- that for every page. A set holds them in (at, event_id) order, filled a batch at a time: a page
-- reads its rows with a LIMIT, and the period is compared once per batch. `through_*` is the last
-- position the set holds every item up to (null: from the start); `complete` when the period has
-- no more. Sets are dropped an hour after they were made; a cursor of a dropped set makes another.
CREATE TABLE reconciliation_item_sets (
  tenant_id         text NOT NULL,
  set_id            uuid NOT NULL,
  reconciliation_id uuid NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  through_at        timestamptz,
  through_id        uuid,
  complete          boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, set_id),
  FOREIGN KEY (tenant_id, reconciliation_id) REFERENCES reconciliations (tenant_id, reconciliation_id) ON DELETE CASCADE
);
CREATE INDEX reconciliation_item_sets_created ON reconciliation_item_sets (created_at);

CREATE TABLE reconciliation_set_items (
  tenant_id   text NOT NULL,
  set_id      uuid NOT NULL,
  at          timestamptz NOT NULL,
  event_id    uuid NOT NULL,
  external_id text NOT NULL,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  status      text NOT NULL,
  type        text NOT NULL,
  -- Signed as it nets in the totals, as text: numeric past 38 digits stays exact.
  value       text NOT NULL,
  reason      text NOT NULL,
  related     text,
  PRIMARY KEY (tenant_id, set_id, at, event_id),
  FOREIGN KEY (tenant_id, set_id) REFERENCES reconciliation_item_sets (tenant_id, set_id) ON DELETE CASCADE
);
