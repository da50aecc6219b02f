-- Each sighting behind an observed edge (an instrument used, a device or ip seen), as
-- graph_transfers holds each movement behind a transfer pair: a correction gives back what the
-- movement it supersedes saw, and a window counts only the sightings inside it (decision 0079).
-- A sighting is one event's: applying is idempotent on the event id (graph_applied).
CREATE TABLE graph_sightings (
  -- The edge seen: its key in graph_edges (whose qualifier is '' for every observed edge).
  tenant_id    text NOT NULL,
  src_kind     text NOT NULL, src_key text NOT NULL,
  type         text NOT NULL,
  dst_kind     text NOT NULL, dst_key text NOT NULL,
  occurred_at  timestamptz NOT NULL,
  event_id     uuid NOT NULL,
  -- The movement that saw it (null: a control event), for retracting it.
  movement_id  text,
  PRIMARY KEY (tenant_id, src_kind, src_key, type, dst_kind, dst_key, occurred_at, event_id)
);
CREATE INDEX graph_sightings_movement ON graph_sightings (tenant_id, movement_id) WHERE movement_id IS NOT NULL;

-- The sightings of the events the graph applied so far, from the canonical store, as
-- pipelines/graph/changes.ts makes them: a completed or pending movement's payer (its account,
-- else its party) uses its instrument, and its payer's party (else its payee's) is seen on its
-- device and ip; a control event's subject party (an account's holder as the account is now) on
-- its own. Movements a correction superseded see nothing.
WITH moved AS (
  SELECT m.* FROM canonical_movements m
   WHERE m.status IN ('completed', 'pending')
     AND EXISTS (SELECT 1 FROM graph_applied a WHERE a.tenant_id = m.tenant_id AND a.event_id = m.event_id)
     AND NOT EXISTS (SELECT 1 FROM graph_retracted r WHERE r.tenant_id = m.tenant_id AND r.movement_id = m.external_id)
)
INSERT INTO graph_sightings (tenant_id, src_kind, src_key, type, dst_kind, dst_key, occurred_at, event_id, movement_id)
SELECT DISTINCT s.tenant_id, s.src_kind, s.src_key, s.type, s.dst_kind, s.dst_key, s.occurred_at, s.event_id, s.movement_id
  FROM (
    SELECT m.tenant_id, CASE WHEN m.debit_account_id IS NOT NULL THEN 'account' ELSE 'party' END AS src_kind,
           coalesce(m.debit_account_id, m.debit_party_id) AS src_key, 'uses' AS type, 'instrument' AS dst_kind,
           m.data->>'instrument_ref' AS dst_key, m.occurred_at, m.event_id, m.external_id AS movement_id
      FROM moved m
     WHERE json_typeof(m.data->'instrument_ref') = 'string'
    UNION ALL
    SELECT m.tenant_id, 'party', coalesce(m.debit_party_id, m.credit_party_id), 'shares', x.kind, x.key, m.occurred_at, m.event_id, m.external_id
      FROM moved m
     CROSS JOIN LATERAL (VALUES ('device', CASE WHEN json_typeof(m.data->'device_ref_hash') = 'string' THEN m.data->>'device_ref_hash' END),
                                ('ip', CASE WHEN json_typeof(m.data->'ip_hash') = 'string' THEN m.data->>'ip_hash' END)) AS x(kind, key)
  ) s
 WHERE s.src_key IS NOT NULL AND s.dst_key IS NOT NULL;

INSERT INTO graph_sightings (tenant_id, src_kind, src_key, type, dst_kind, dst_key, occurred_at, event_id, movement_id)
SELECT DISTINCT c.tenant_id, 'party', p.party, 'shares', x.kind, x.key, c.occurred_at, c.event_id, NULL::text
  FROM canonical_control_events c
 CROSS JOIN LATERAL (
   SELECT CASE WHEN c.subject_kind = 'party' THEN c.subject_external_id
               WHEN c.subject_kind = 'account' THEN (SELECT e.data->>'holder_party_id' FROM canonical_entities e
                                                      WHERE e.tenant_id = c.tenant_id AND e.object = 'account' AND e.external_id = c.subject_external_id)
          END AS party
 ) p
 CROSS JOIN LATERAL (VALUES ('device', CASE WHEN json_typeof(c.data->'device_ref_hash') = 'string' THEN c.data->>'device_ref_hash' END),
                            ('ip', CASE WHEN json_typeof(c.data->'ip_hash') = 'string' THEN c.data->>'ip_hash' END)) AS x(kind, key)
 WHERE p.party IS NOT NULL AND x.key IS NOT NULL
   AND EXISTS (SELECT 1 FROM graph_applied a WHERE a.tenant_id = c.tenant_id AND a.event_id = c.event_id);

-- Observed edges are now the sum of their sightings: those of superseded movements are given back
-- (their first and last instants with them), and an edge left with none goes.
UPDATE graph_edges e
   SET count = s.n, first_at = s.first_at, last_at = s.last_at
  FROM (SELECT tenant_id, src_kind, src_key, type, dst_kind, dst_key, count(*) AS n, min(occurred_at) AS first_at, max(occurred_at) AS last_at
          FROM graph_sightings GROUP BY 1, 2, 3, 4, 5, 6) s
 WHERE e.tenant_id = s.tenant_id AND e.src_kind = s.src_kind AND e.src_key = s.src_key AND e.type = s.type
   AND e.dst_kind = s.dst_kind AND e.dst_key = s.dst_key AND e.qualifier = '' AND e.origin IS NULL;

DELETE FROM graph_edges e
 WHERE e.origin IS NULL AND e.type IN ('uses', 'shares') AND e.qualifier = ''
   AND NOT EXISTS (SELECT 1 FROM graph_sightings s
                    WHERE s.tenant_id = e.tenant_id AND s.src_kind = e.src_kind AND s.src_key = e.src_key AND s.type = e.type
                      AND s.dst_kind = e.dst_kind AND s.dst_key = e.dst_key);
