DROP INDEX alerts_open_party;
CREATE INDEX alerts_party ON alerts (tenant_id, party_id) WHERE mode = 'live';
