-- Learned detection models (pipelines/detect/models): one row per model a tenant trained, never
-- edited (a new training is a new version). The document holds the features, weights, threshold
-- and the held-back evaluation; the built-in default model is shipped with the code, not stored.
-- A model runs only through a ruleset that names it (detector learned_model, params.model).
CREATE TABLE detection_models (
  tenant_id   text NOT NULL,
  version     integer NOT NULL CHECK (version > 0),
  document    jsonb NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, version)
);
