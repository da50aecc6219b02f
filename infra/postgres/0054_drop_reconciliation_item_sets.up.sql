-- Reconciliation items are read from a position without writing anything
-- (services/reconciliations/movement-items.ts): a listing made with a read key no longer stores a
-- set of its items, so the sets of migration 0053 go (decision 0025).
DROP TABLE reconciliation_set_items;
DROP TABLE reconciliation_item_sets;
