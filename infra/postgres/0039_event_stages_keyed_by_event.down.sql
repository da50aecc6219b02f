ALTER TABLE event_stages DROP CONSTRAINT event_stages_pkey;
ALTER TABLE event_stages ADD CONSTRAINT event_stages_tenant_id UNIQUE (tenant_id, event_id, id);
ALTER TABLE event_stages ADD CONSTRAINT event_stages_pkey PRIMARY KEY (id);
