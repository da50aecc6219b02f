-- Each tenant's goAML reporting-entity settings: who files a case's report with the FIU, and the
-- FIU's lookup codes for our movement types and detectors (docs/decisions/0032-goaml-export.md).
-- Set by the operator; a tenant without a row cannot export goAML.
CREATE TABLE goaml_reporting_entities (
  tenant_id               text PRIMARY KEY REFERENCES tenants (tenant_id),
  rentity_id              integer NOT NULL CHECK (rentity_id >= 1),
  rentity_branch          text NOT NULL CHECK (length(rentity_branch) BETWEEN 1 AND 255),
  institution_name        text NOT NULL CHECK (length(institution_name) BETWEEN 1 AND 255),
  institution_code        text NOT NULL CHECK (length(institution_code) BETWEEN 1 AND 50),
  country_code            text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
  reporting_first_name    text NOT NULL CHECK (length(reporting_first_name) BETWEEN 1 AND 100),
  reporting_last_name     text NOT NULL CHECK (length(reporting_last_name) BETWEEN 1 AND 100),
  reporting_email         text CHECK (length(reporting_email) <= 255),
  location_type           text NOT NULL,
  location_address        text NOT NULL CHECK (length(location_address) BETWEEN 1 AND 100),
  location_city           text NOT NULL CHECK (length(location_city) BETWEEN 1 AND 255),
  location_zip            text,
  -- {"transmode": {movement type: code}, "funds": {movement type: code}, "indicators": {detector: code}}
  lookups                 jsonb NOT NULL DEFAULT '{}',
  updated_at              timestamptz NOT NULL
);
