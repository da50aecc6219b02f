ALTER TABLE outbox ADD CONSTRAINT outbox_pkey PRIMARY KEY (position);
