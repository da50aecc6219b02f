DROP TABLE IF EXISTS import_rejects;
DROP TABLE IF EXISTS import_chunks;
DROP TABLE IF EXISTS imports;
