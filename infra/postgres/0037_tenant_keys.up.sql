-- Every tenant-owned table has a primary or unique key naming its tenant (issue 33;
-- test/schema-tenancy.test.ts sweeps the catalog). Where a table already had an index that
-- begins with tenant_id and ends with its id, that index becomes the key, so no table writes one
-- more index entry per row; elsewhere the key is added beside the global id, as in 0029.

-- Child rows: the primary key gains the tenant (0023's form), no index is added.
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_pkey,
  ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (tenant_id, delivery_id, attempt);
ALTER TABLE reconciliation_break_comments
  DROP CONSTRAINT reconciliation_break_comments_pkey,
  ADD CONSTRAINT reconciliation_break_comments_pkey PRIMARY KEY (tenant_id, break_id, comment_id);
ALTER TABLE reconciliation_expectation_misses
  DROP CONSTRAINT reconciliation_expectation_misses_pkey,
  ADD CONSTRAINT reconciliation_expectation_misses_pkey PRIMARY KEY (tenant_id, expectation_id, day);

-- Global ids looked up before the tenant is known keep their primary key; the tenant's index
-- becomes a unique one on the same columns.
ALTER TABLE api_keys ADD CONSTRAINT api_keys_tenant_id UNIQUE (tenant_id, key_id);
DROP INDEX api_keys_tenant;
ALTER TABLE event_stages ADD CONSTRAINT event_stages_tenant_id UNIQUE (tenant_id, event_id, id);
DROP INDEX event_stages_event;
CREATE UNIQUE INDEX console_audit_tenant_id ON console_audit (tenant_id, at DESC, audit_id DESC);
DROP INDEX console_audit_tenant;
ALTER TABLE console_sessions ADD CONSTRAINT console_sessions_tenant_id UNIQUE (tenant_id, session_id);
ALTER TABLE parked_records ADD CONSTRAINT parked_records_tenant_id UNIQUE (tenant_id, id);
