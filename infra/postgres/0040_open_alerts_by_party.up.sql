-- Detection asks, for every party a mule_network evaluation looks at, whether it has an open live
-- alert whose window started by the instant judged (flagged-loader.ts); the console's posture
-- reasons read a party's open live alerts. Both probe one party's open alerts, so the index holds
-- those alone, with the window's start: one descent answers the probe. The index on all of a
-- party's live alerts was passed over by the planner on a table it still believed small, which
-- then filtered every alert of the tenant for each party asked (docs/decisions/0054).
DROP INDEX alerts_party;
CREATE INDEX alerts_open_party ON alerts (tenant_id, party_id, window_from) WHERE mode = 'live' AND status = 'open';
