ALTER TABLE api_nonces
  DROP CONSTRAINT api_nonces_pkey,
  ADD CONSTRAINT api_nonces_pkey PRIMARY KEY (key_id, nonce),
  DROP COLUMN tenant_id;
