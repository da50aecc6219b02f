-- Movements that a correction supersedes (links.correction_of), for the aggregate store: an
-- activity of a movement named here is not recorded, and one already recorded is deleted when its
-- retraction is (platform/aggregates/postgres.ts, decision 0064). A row is written whichever of
-- the two movements arrives first, so an original that comes after its correction is never
-- counted. `subjects` names the subjects whose activities were deleted (kind:id), and
-- recorded_xid journals the row as agg_activity's does: detection's cache of recent activities
-- drops those subjects when it reads what changed since its previous read.
CREATE TABLE agg_retraction (
  tenant_id     text NOT NULL,
  movement_id   text NOT NULL,
  retracted_by  text NOT NULL,
  subjects      text[] NOT NULL,
  recorded_xid  xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (tenant_id, movement_id)
);
CREATE INDEX agg_retraction_recorded ON agg_retraction (tenant_id, recorded_xid);

-- A retraction deletes an original's activities by its movement id alone: its subjects are the
-- original's legs, which the correction need not share.
CREATE INDEX agg_activity_movement ON agg_activity (tenant_id, movement_id);
