-- A nonce is claimed under its key, and the key belongs to a tenant: the row says which, and the
-- tenant leads its key like every other tenant-owned row's (decision 0029). Claims older than the
-- 600 s window are dead; those of keys that no longer exist are dropped rather than guessed.
ALTER TABLE api_nonces ADD COLUMN tenant_id text;
UPDATE api_nonces n SET tenant_id = k.tenant_id FROM api_keys k WHERE k.key_id = n.key_id;
DELETE FROM api_nonces WHERE tenant_id IS NULL;
ALTER TABLE api_nonces
  ALTER COLUMN tenant_id SET NOT NULL,
  DROP CONSTRAINT api_nonces_pkey,
  ADD CONSTRAINT api_nonces_pkey PRIMARY KEY (tenant_id, key_id, nonce);
