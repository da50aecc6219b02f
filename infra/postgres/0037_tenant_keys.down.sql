ALTER TABLE parked_records DROP CONSTRAINT parked_records_tenant_id;
ALTER TABLE console_sessions DROP CONSTRAINT console_sessions_tenant_id;
CREATE INDEX console_audit_tenant ON console_audit (tenant_id, at DESC, audit_id DESC);
DROP INDEX console_audit_tenant_id;
CREATE INDEX event_stages_event ON event_stages (tenant_id, event_id, id);
ALTER TABLE event_stages DROP CONSTRAINT event_stages_tenant_id;
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
ALTER TABLE api_keys DROP CONSTRAINT api_keys_tenant_id;

ALTER TABLE reconciliation_expectation_misses
  DROP CONSTRAINT reconciliation_expectation_misses_pkey,
  ADD CONSTRAINT reconciliation_expectation_misses_pkey PRIMARY KEY (expectation_id, day);
ALTER TABLE reconciliation_break_comments
  DROP CONSTRAINT reconciliation_break_comments_pkey,
  ADD CONSTRAINT reconciliation_break_comments_pkey PRIMARY KEY (break_id, comment_id);
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_pkey,
  ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt);
