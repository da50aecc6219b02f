DROP TABLE reconciliation_set_items;
DROP TABLE reconciliation_item_sets;
