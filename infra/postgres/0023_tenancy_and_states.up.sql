-- Every tenant-owned row carries its tenant in its key, and a status column takes only its
-- values (issue 33, decision 0029).

-- Import chunks and rejects: the tenant in the key, and the import named by (tenant, import), so
-- that no row can point at another tenant's import.
ALTER TABLE imports ADD CONSTRAINT imports_tenant_import UNIQUE (tenant_id, import_id);

ALTER TABLE import_chunks ADD COLUMN tenant_id text;
UPDATE import_chunks c SET tenant_id = i.tenant_id FROM imports i WHERE i.import_id = c.import_id;
ALTER TABLE import_chunks
  ALTER COLUMN tenant_id SET NOT NULL,
  DROP CONSTRAINT import_chunks_pkey,
  DROP CONSTRAINT import_chunks_import_id_fkey,
  ADD CONSTRAINT import_chunks_pkey PRIMARY KEY (tenant_id, import_id, chunk_no),
  ADD CONSTRAINT import_chunks_import FOREIGN KEY (tenant_id, import_id) REFERENCES imports (tenant_id, import_id);

ALTER TABLE import_rejects ADD COLUMN tenant_id text;
UPDATE import_rejects r SET tenant_id = i.tenant_id FROM imports i WHERE i.import_id = r.import_id;
ALTER TABLE import_rejects
  ALTER COLUMN tenant_id SET NOT NULL,
  DROP CONSTRAINT import_rejects_pkey,
  DROP CONSTRAINT import_rejects_import_id_fkey,
  ADD CONSTRAINT import_rejects_pkey PRIMARY KEY (tenant_id, import_id, seq),
  ADD CONSTRAINT import_rejects_import FOREIGN KEY (tenant_id, import_id) REFERENCES imports (tenant_id, import_id);

-- Reconciliation results: the tenant in the key, the reconciliation named by (tenant, id).
ALTER TABLE reconciliations ADD CONSTRAINT reconciliations_tenant_id UNIQUE (tenant_id, reconciliation_id);
ALTER TABLE reconciliation_results ADD COLUMN tenant_id text;
UPDATE reconciliation_results r SET tenant_id = d.tenant_id FROM reconciliations d WHERE d.reconciliation_id = r.reconciliation_id;
ALTER TABLE reconciliation_results
  ALTER COLUMN tenant_id SET NOT NULL,
  DROP CONSTRAINT reconciliation_results_pkey,
  DROP CONSTRAINT reconciliation_results_reconciliation_id_fkey,
  ADD CONSTRAINT reconciliation_results_pkey PRIMARY KEY (tenant_id, reconciliation_id, seq),
  ADD CONSTRAINT reconciliation_results_reconciliation FOREIGN KEY (tenant_id, reconciliation_id) REFERENCES reconciliations (tenant_id, reconciliation_id),
  ADD CONSTRAINT reconciliation_results_status CHECK (status IN ('matched', 'mismatched'));

-- States: the values the code writes (test/schema-states.test.ts compares each list with the
-- TypeScript constant it mirrors).
ALTER TABLE inbox_events ADD CONSTRAINT inbox_events_status
  CHECK (status IN ('pending', 'held', 'quarantined', 'processed', 'rejected'));
ALTER TABLE event_stages ADD CONSTRAINT event_stages_status
  CHECK (status IN ('ok', 'held', 'quarantined', 'rejected', 'failed'));
ALTER TABLE canonical_movements ADD CONSTRAINT canonical_movements_status
  CHECK (status IN ('completed', 'pending', 'failed', 'reversed'));
ALTER TABLE episodes
  ADD CONSTRAINT episodes_case_status CHECK (case_status IN ('open', 'investigating', 'escalated', 'closed')),
  ADD CONSTRAINT episodes_disposition CHECK (disposition IN ('suspicious_activity_reported', 'no_further_action', 'false_positive', 'inconclusive'));
ALTER TABLE case_actions
  ADD CONSTRAINT case_actions_case_status CHECK (case_status IN ('open', 'investigating', 'escalated', 'closed')),
  ADD CONSTRAINT case_actions_disposition CHECK (disposition IN ('suspicious_activity_reported', 'no_further_action', 'false_positive', 'inconclusive'));

-- FX rates: a number, not text, and one rate per pair and instant within a file (the loader
-- already refuses a second one).
ALTER TABLE fx_rates
  ALTER COLUMN rate TYPE numeric USING rate::numeric,
  ADD CONSTRAINT fx_rates_positive CHECK (rate > 0),
  ADD CONSTRAINT fx_rates_pkey PRIMARY KEY (file_id, base, quote, valid_from);
