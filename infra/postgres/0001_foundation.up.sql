-- Tenants, operator-issued API keys, the nonce ledger and the per-tenant asset registry.

CREATE TABLE tenants (
  tenant_id   text PRIMARY KEY,
  base_asset  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- The secret is sealed (AES-256-GCM) under the master key; it is never stored in plain text.
CREATE TABLE api_keys (
  key_id         text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
  scopes         text[] NOT NULL CHECK (cardinality(scopes) > 0),
  environment    text NOT NULL CHECK (environment IN ('test', 'live')),
  secret_sealed  bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

-- A nonce is single-use per key for 600 s. Rows older than that are dead and swept; a claim of a
-- nonce whose row is older than the window succeeds and refreshes it.
CREATE TABLE api_nonces (
  key_id      text NOT NULL,
  nonce       text NOT NULL,
  claimed_at  timestamptz NOT NULL,
  PRIMARY KEY (key_id, nonce)
);
-- Rows arrive in claimed_at order, so a BRIN index serves the sweep at almost no write cost.
CREATE INDEX api_nonces_claimed_at ON api_nonces USING brin (claimed_at);

-- Non-ISO assets (X-...) a tenant has registered, with their minor-unit scale. ISO 4217 assets
-- come from the built-in registry in schemas/.
CREATE TABLE tenant_assets (
  tenant_id   text NOT NULL REFERENCES tenants (tenant_id),
  asset       text NOT NULL CHECK (asset ~ '^X-[A-Z0-9]{2,10}$'),
  scale       smallint NOT NULL CHECK (scale BETWEEN 0 AND 18),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, asset)
);
