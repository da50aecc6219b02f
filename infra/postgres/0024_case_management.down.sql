DROP INDEX IF EXISTS alerts_episode;
DROP TABLE IF EXISTS case_inbox;
DROP TABLE IF EXISTS case_report_proposals;
DROP TABLE IF EXISTS case_notes;
DROP FUNCTION IF EXISTS case_notes_refuse_change();
DROP TABLE IF EXISTS case_sla;
