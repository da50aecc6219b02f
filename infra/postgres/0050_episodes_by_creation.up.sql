-- GET /v1/episodes pages by creation (newest first), which never changes, so a walk sees every
-- episode that existed when it started exactly once; `since` still filters on updated_at
-- (episodes_listing).
CREATE INDEX episodes_by_creation ON episodes (tenant_id, created_at DESC, episode_id DESC);
