-- A stage row is read by its event only ((tenant_id, event_id), in id order): the unique key on
-- those three columns becomes the primary key, and the index on id alone, written for every
-- stage of every event and read by nothing, goes (docs/decisions/0052). id stays an identity.
ALTER TABLE event_stages DROP CONSTRAINT event_stages_pkey;
ALTER TABLE event_stages DROP CONSTRAINT event_stages_tenant_id;
ALTER TABLE event_stages ADD CONSTRAINT event_stages_pkey PRIMARY KEY (tenant_id, event_id, id);
