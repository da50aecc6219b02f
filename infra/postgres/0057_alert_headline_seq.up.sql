-- The evidence row of an alert's headline hit, named by the alert (pipelines/detect/alerts.ts).
-- Readers found it as the latest row with the alert's score and severity, which on a tie was the
-- latest recorded: a late fact judged at its own, earlier instant then gave the alert an older
-- picture than the one it had. With ties now won by the later event time, the rows no longer say
-- which is the headline, so the alert does. Null for alerts written before: their headline is
-- still the row the old rule finds (the rule they were written under), until detection widens
-- them again and names it (services/cases/store.ts HEADLINE_EVIDENCE_ORDER). No rewrite of the
-- table: adding a nullable column is a catalog change.
ALTER TABLE alerts ADD COLUMN headline_seq integer;
