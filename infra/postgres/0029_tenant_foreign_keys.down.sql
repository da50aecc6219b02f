ALTER TABLE case_report_proposals
  DROP CONSTRAINT case_report_proposals_proposed_by,
  DROP CONSTRAINT case_report_proposals_decided_by,
  ADD CONSTRAINT case_report_proposals_proposed_by_fkey FOREIGN KEY (proposed_by) REFERENCES console_users (user_id),
  ADD CONSTRAINT case_report_proposals_decided_by_fkey FOREIGN KEY (decided_by) REFERENCES console_users (user_id);
ALTER TABLE case_notes
  DROP CONSTRAINT case_notes_author,
  ADD CONSTRAINT case_notes_author_user_id_fkey FOREIGN KEY (author_user_id) REFERENCES console_users (user_id);
ALTER TABLE case_sla
  DROP CONSTRAINT case_sla_updated_by,
  ADD CONSTRAINT case_sla_updated_by_fkey FOREIGN KEY (updated_by) REFERENCES console_users (user_id);
ALTER TABLE console_assignments
  DROP CONSTRAINT console_assignments_user,
  DROP CONSTRAINT console_assignments_assigned_by,
  ADD CONSTRAINT console_assignments_user_id_fkey FOREIGN KEY (user_id) REFERENCES console_users (user_id),
  ADD CONSTRAINT console_assignments_assigned_by_fkey FOREIGN KEY (assigned_by) REFERENCES console_users (user_id);
ALTER TABLE console_sessions
  DROP CONSTRAINT console_sessions_owner,
  ADD CONSTRAINT console_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES console_users (user_id);
ALTER TABLE reconciliation_expectation_misses
  DROP CONSTRAINT reconciliation_expectation_misses_expectation,
  ADD CONSTRAINT reconciliation_expectation_misses_expectation_id_fkey FOREIGN KEY (expectation_id) REFERENCES reconciliation_expectations (expectation_id);
ALTER TABLE reconciliation_break_comments
  DROP CONSTRAINT reconciliation_break_comments_break,
  ADD CONSTRAINT reconciliation_break_comments_break_id_fkey FOREIGN KEY (break_id) REFERENCES reconciliation_breaks (break_id);
ALTER TABLE reconciliation_breaks
  DROP CONSTRAINT reconciliation_breaks_reconciliation,
  ADD CONSTRAINT reconciliation_breaks_reconciliation_id_fkey FOREIGN KEY (reconciliation_id) REFERENCES reconciliations (reconciliation_id);
ALTER TABLE reconciliations
  DROP CONSTRAINT reconciliations_corrects,
  ADD CONSTRAINT reconciliations_corrects_fkey FOREIGN KEY (corrects) REFERENCES reconciliations (reconciliation_id);
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_delivery,
  ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (delivery_id);
ALTER TABLE webhook_deliveries
  DROP CONSTRAINT webhook_deliveries_endpoint,
  DROP CONSTRAINT webhook_deliveries_envelope,
  ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (endpoint_id),
  ADD CONSTRAINT webhook_deliveries_envelope_id_fkey FOREIGN KEY (envelope_id) REFERENCES outgoing_events (envelope_id);
ALTER TABLE reconciliation_expectations DROP CONSTRAINT reconciliation_expectations_tenant_id;
ALTER TABLE reconciliation_breaks DROP CONSTRAINT reconciliation_breaks_tenant_id;
ALTER TABLE console_users DROP CONSTRAINT console_users_tenant_id;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_tenant_id;
ALTER TABLE outgoing_events DROP CONSTRAINT outgoing_events_tenant_id;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_tenant_id;
