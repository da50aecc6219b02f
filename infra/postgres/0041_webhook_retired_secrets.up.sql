-- Secrets a rotation retired while an earlier overlap was still open. Each keeps signing until
-- the instant its own rotation promised (previous_secret_valid_until), so a second rotation never
-- cuts short the first one's overlap. The endpoint row keeps the latest retired secret; this table
-- the older ones (docs/decisions/0062).
CREATE TABLE webhook_retired_secrets (
  tenant_id      text NOT NULL,
  endpoint_id    uuid NOT NULL,
  secret_id      uuid NOT NULL,
  secret_sealed  bytea NOT NULL,
  valid_until    timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, endpoint_id, secret_id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id)
);
