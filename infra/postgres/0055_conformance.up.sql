-- How well each tenant's live feed keeps to the contract (services/conformance, decision 0077).
-- Every API process counts the items it answers, per family and five-minute bucket of receipt:
-- accepted ones under code '' and path '', refused ones under their first finding's code and path
-- (the item's own path, array indices as *). It adds its counts here every few seconds.
CREATE TABLE conformance_tallies (
  tenant_id  text NOT NULL,
  family     text NOT NULL,
  bucket     timestamptz NOT NULL,
  code       text NOT NULL,
  path       text NOT NULL,
  items      bigint NOT NULL,
  PRIMARY KEY (tenant_id, family, bucket, code, path)
);
CREATE INDEX conformance_tallies_bucket ON conformance_tallies (bucket);

-- Whether a tenant's family is drifting: conformance.drift_detected is sent when it starts to.
CREATE TABLE conformance_states (
  tenant_id   text NOT NULL,
  family      text NOT NULL,
  drifting    boolean NOT NULL,
  changed_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, family)
);
