DROP TABLE IF EXISTS webhook_attempts;
DROP TABLE IF EXISTS webhook_deliveries;
DROP INDEX IF EXISTS outgoing_events_unfanned;
ALTER TABLE outgoing_events DROP COLUMN IF EXISTS fanned_out_at;
DROP TABLE IF EXISTS webhook_endpoints;
DROP FUNCTION IF EXISTS svc_uuidv7(timestamptz);
