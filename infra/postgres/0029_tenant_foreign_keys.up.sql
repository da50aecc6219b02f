-- A row that points at another tenant-owned row names it by (tenant, id), so it can never point
-- at another tenant's row (issue 33; test/schema-tenancy.test.ts sweeps the catalog). Each parent
-- gains a key on (tenant_id, id) for the foreign keys to reference; its own primary key stays, as
-- the ids are global and are looked up before the tenant is known (a session, a delivery to retry).

ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_tenant_id UNIQUE (tenant_id, endpoint_id);
ALTER TABLE outgoing_events ADD CONSTRAINT outgoing_events_tenant_id UNIQUE (tenant_id, envelope_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_tenant_id UNIQUE (tenant_id, delivery_id);
ALTER TABLE console_users ADD CONSTRAINT console_users_tenant_id UNIQUE (tenant_id, user_id);
ALTER TABLE reconciliation_breaks ADD CONSTRAINT reconciliation_breaks_tenant_id UNIQUE (tenant_id, break_id);
ALTER TABLE reconciliation_expectations ADD CONSTRAINT reconciliation_expectations_tenant_id UNIQUE (tenant_id, expectation_id);

ALTER TABLE webhook_deliveries
  DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey,
  DROP CONSTRAINT webhook_deliveries_envelope_id_fkey,
  ADD CONSTRAINT webhook_deliveries_endpoint FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id),
  ADD CONSTRAINT webhook_deliveries_envelope FOREIGN KEY (tenant_id, envelope_id) REFERENCES outgoing_events (tenant_id, envelope_id);
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_delivery_id_fkey,
  ADD CONSTRAINT webhook_attempts_delivery FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, delivery_id);

ALTER TABLE reconciliations
  DROP CONSTRAINT reconciliations_corrects_fkey,
  ADD CONSTRAINT reconciliations_corrects FOREIGN KEY (tenant_id, corrects) REFERENCES reconciliations (tenant_id, reconciliation_id);
ALTER TABLE reconciliation_breaks
  DROP CONSTRAINT reconciliation_breaks_reconciliation_id_fkey,
  ADD CONSTRAINT reconciliation_breaks_reconciliation FOREIGN KEY (tenant_id, reconciliation_id) REFERENCES reconciliations (tenant_id, reconciliation_id);
ALTER TABLE reconciliation_break_comments
  DROP CONSTRAINT reconciliation_break_comments_break_id_fkey,
  ADD CONSTRAINT reconciliation_break_comments_break FOREIGN KEY (tenant_id, break_id) REFERENCES reconciliation_breaks (tenant_id, break_id);
ALTER TABLE reconciliation_expectation_misses
  DROP CONSTRAINT reconciliation_expectation_misses_expectation_id_fkey,
  ADD CONSTRAINT reconciliation_expectation_misses_expectation FOREIGN KEY (tenant_id, expectation_id) REFERENCES reconciliation_expectations (tenant_id, expectation_id);

ALTER TABLE console_sessions
  DROP CONSTRAINT console_sessions_user_id_fkey,
  ADD CONSTRAINT console_sessions_owner FOREIGN KEY (tenant_id, user_id) REFERENCES console_users (tenant_id, user_id);
ALTER TABLE console_assignments
  DROP CONSTRAINT console_assignments_user_id_fkey,
  DROP CONSTRAINT console_assignments_assigned_by_fkey,
  ADD CONSTRAINT console_assignments_user FOREIGN KEY (tenant_id, user_id) REFERENCES console_users (tenant_id, user_id),
  ADD CONSTRAINT console_assignments_assigned_by FOREIGN KEY (tenant_id, assigned_by) REFERENCES console_users (tenant_id, user_id);
ALTER TABLE case_sla
  DROP CONSTRAINT case_sla_updated_by_fkey,
  ADD CONSTRAINT case_sla_updated_by FOREIGN KEY (tenant_id, updated_by) REFERENCES console_users (tenant_id, user_id);
ALTER TABLE case_notes
  DROP CONSTRAINT case_notes_author_user_id_fkey,
  ADD CONSTRAINT case_notes_author FOREIGN KEY (tenant_id, author_user_id) REFERENCES console_users (tenant_id, user_id);
ALTER TABLE case_report_proposals
  DROP CONSTRAINT case_report_proposals_proposed_by_fkey,
  DROP CONSTRAINT case_report_proposals_decided_by_fkey,
  ADD CONSTRAINT case_report_proposals_proposed_by FOREIGN KEY (tenant_id, proposed_by) REFERENCES console_users (tenant_id, user_id),
  ADD CONSTRAINT case_report_proposals_decided_by FOREIGN KEY (tenant_id, decided_by) REFERENCES console_users (tenant_id, user_id);
