DROP INDEX IF EXISTS outbox_log;
ALTER TABLE outbox DROP COLUMN IF EXISTS stream, DROP COLUMN IF EXISTS payload;
CREATE INDEX outbox_log ON outbox (partition, writer_xid, position);
