-- The log is read by (stream, partition, writer_xid, position) through outbox_log; nothing reads a
-- row by its position alone, and an identity column GENERATED ALWAYS numbers the rows uniquely by
-- itself. The primary key's index was one more index entry per accepted event and per change
-- record, written and never read (docs/decisions/0045).
ALTER TABLE outbox DROP CONSTRAINT outbox_pkey;
