-- Activities tied at one instant are listed by movement id in byte order, as ClickHouse, the
-- snapshots and detection's cache order them (snapshot.ts, compareActivities). The column took the
-- database's collation: C on the embedded cluster, but en_US on an image initialised with that
-- locale (the compose file's postgres), where `a1` sorts before `B1` and a listing cut at a limit
-- kept other activities than the snapshot answering the same read.
ALTER TABLE agg_activity ALTER COLUMN movement_id TYPE text COLLATE "C";
