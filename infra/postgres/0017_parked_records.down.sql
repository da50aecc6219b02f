DROP TABLE IF EXISTS parked_records;
