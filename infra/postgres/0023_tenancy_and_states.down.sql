ALTER TABLE fx_rates
  DROP CONSTRAINT fx_rates_pkey,
  DROP CONSTRAINT fx_rates_positive,
  ALTER COLUMN rate TYPE text USING rate::text;

ALTER TABLE case_actions DROP CONSTRAINT case_actions_case_status, DROP CONSTRAINT case_actions_disposition;
ALTER TABLE episodes DROP CONSTRAINT episodes_case_status, DROP CONSTRAINT episodes_disposition;
ALTER TABLE canonical_movements DROP CONSTRAINT canonical_movements_status;
ALTER TABLE event_stages DROP CONSTRAINT event_stages_status;
ALTER TABLE inbox_events DROP CONSTRAINT inbox_events_status;

ALTER TABLE reconciliation_results
  DROP CONSTRAINT reconciliation_results_status,
  DROP CONSTRAINT reconciliation_results_reconciliation,
  DROP CONSTRAINT reconciliation_results_pkey,
  ADD CONSTRAINT reconciliation_results_pkey PRIMARY KEY (reconciliation_id, seq),
  ADD CONSTRAINT reconciliation_results_reconciliation_id_fkey FOREIGN KEY (reconciliation_id) REFERENCES reconciliations (reconciliation_id),
  DROP COLUMN tenant_id;
ALTER TABLE reconciliations DROP CONSTRAINT reconciliations_tenant_id;

ALTER TABLE import_rejects
  DROP CONSTRAINT import_rejects_import,
  DROP CONSTRAINT import_rejects_pkey,
  ADD CONSTRAINT import_rejects_pkey PRIMARY KEY (import_id, seq),
  ADD CONSTRAINT import_rejects_import_id_fkey FOREIGN KEY (import_id) REFERENCES imports (import_id),
  DROP COLUMN tenant_id;
ALTER TABLE import_chunks
  DROP CONSTRAINT import_chunks_import,
  DROP CONSTRAINT import_chunks_pkey,
  ADD CONSTRAINT import_chunks_pkey PRIMARY KEY (import_id, chunk_no),
  ADD CONSTRAINT import_chunks_import_id_fkey FOREIGN KEY (import_id) REFERENCES imports (import_id),
  DROP COLUMN tenant_id;
ALTER TABLE imports DROP CONSTRAINT imports_tenant_import;
