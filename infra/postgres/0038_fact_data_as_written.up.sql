-- A fact's data is kept as the text the canonical pipeline wrote, which is also its change
-- record's data: `json`, checked as JSON on the way in but not rebuilt into jsonb's tree, which
-- was about a tenth of PostgreSQL's work per canonical movement (docs/decisions/0051). Readers
-- take single members (->, ->>), which json has too. Rewrites both tables once.
ALTER TABLE canonical_movements ALTER COLUMN data TYPE json USING data::json;
ALTER TABLE canonical_control_events ALTER COLUMN data TYPE json USING data::json;
