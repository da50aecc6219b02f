-- The relationship network (the embedded adapter of the GraphStore port), fed by pipelines/graph
-- from canonical change records. Nodes are parties, accounts and instruments (by external id) and
-- identifiers, devices and ips (by keyed hash); only entities carry attributes, so only they have
-- rows in graph_nodes: the other kinds exist as edge endpoints.

-- Every event applied to the graph: applying is idempotent on the event id.
CREATE TABLE graph_applied (
  tenant_id  text NOT NULL,
  event_id   uuid NOT NULL,
  PRIMARY KEY (tenant_id, event_id)
);

CREATE TABLE graph_nodes (
  tenant_id   text NOT NULL,
  kind        text NOT NULL,
  key         text NOT NULL,
  attrs       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, kind, key)
);

-- Every edge, directed src → dst; traversals follow both directions. Declared edges (holds, a
-- party's identifiers, relationships) name the entity that declared them (origin) and carry
-- validity; observed edges (uses, device and ip sightings) and transfer pairs carry count, first
-- and last seen; transfer pairs also the sum in base minor units (unpriced movements counted apart).
CREATE TABLE graph_edges (
  tenant_id   text NOT NULL,
  src_kind    text NOT NULL,
  src_key     text NOT NULL,
  type        text NOT NULL,
  dst_kind    text NOT NULL,
  dst_key     text NOT NULL,
  qualifier   text NOT NULL DEFAULT '',
  origin      text,
  valid_from  timestamptz,
  valid_to    timestamptz,
  count       bigint NOT NULL DEFAULT 0,
  sum         numeric(38, 0),
  unpriced    bigint NOT NULL DEFAULT 0,
  first_at    timestamptz,
  last_at     timestamptz,
  attrs       jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, src_kind, src_key, type, dst_kind, dst_key, qualifier)
);
CREATE INDEX graph_edges_dst ON graph_edges (tenant_id, dst_kind, dst_key);
CREATE INDEX graph_edges_origin ON graph_edges (tenant_id, origin) WHERE origin IS NOT NULL;

-- The individual movements behind transfer pairs: windows, cycles, fan-in and fan-out read these.
-- Keyed by pair then time, so a pair's latest movements and a sender's outflows are index ranges;
-- a movement is inserted once because its event is claimed in graph_applied first.
CREATE TABLE graph_transfers (
  tenant_id    text NOT NULL,
  src          text NOT NULL,
  dst          text NOT NULL,
  occurred_at  timestamptz NOT NULL,
  movement_id  text NOT NULL,
  amount       numeric(38, 0),
  PRIMARY KEY (tenant_id, src, dst, occurred_at, movement_id)
);
CREATE INDEX graph_transfers_dst ON graph_transfers (tenant_id, dst, occurred_at);
