DROP TABLE IF EXISTS rate_limit_buckets;
DROP TABLE IF EXISTS idempotency_keys;
DROP TABLE IF EXISTS event_stages;
DROP TABLE IF EXISTS outbox;
DROP TABLE IF EXISTS inbox_events;
ALTER TABLE tenants DROP COLUMN IF EXISTS rate_limit_refill_per_s, DROP COLUMN IF EXISTS rate_limit_capacity;
