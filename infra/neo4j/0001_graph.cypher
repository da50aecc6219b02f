// The relationship network in Neo4j 5 (5.26 LTS or later, Cypher 5): the GraphStore adapter in
// platform/graph/neo4j applies these statements on migrate(), each on its own, every time: each is
// IF NOT EXISTS, so applying them again changes nothing. One statement per `;`; lines starting
// with `//` are comments. Only property uniqueness constraints and range indexes: both exist in
// Community Edition (node key and existence constraints would need Enterprise).
// Model and reasons: docs/decisions/0015-neo4j-graph.md.

// A node of the network (party, account, instrument by external id; identifier, device, ip by
// keyed hash), one per tenant, kind and key: MERGE finds it by this constraint's index.
CREATE CONSTRAINT graph_node_identity IF NOT EXISTS FOR (n:GraphNode) REQUIRE (n.tenant, n.kind, n.key) IS UNIQUE;

// Every event applied: apply() claims an event by MERGE on this constraint, so a change applied
// twice (or by two writers at once) changes the network once.
CREATE CONSTRAINT graph_event_identity IF NOT EXISTS FOR (e:GraphEvent) REQUIRE (e.tenant, e.eventId) IS UNIQUE;

// One EDGE per identity (type, both ends, qualifier) in a tenant.
CREATE CONSTRAINT graph_edge_identity IF NOT EXISTS FOR ()-[e:EDGE]-() REQUIRE (e.tenant, e.identity) IS UNIQUE;

// A newer version of an entity closes the declared edges it no longer declares: found by origin.
CREATE INDEX graph_edge_origin IF NOT EXISTS FOR ()-[e:EDGE]-() ON (e.tenant, e.origin);

// One MOVEMENT per movement of a pair at its time, as PostgreSQL's graph_transfers key (the same
// movement id between two other accounts, or at another time, is another movement). apply()
// MERGEs on it. Without a constraint Neo4j 5.26 planned that MERGE as a walk over every MOVEMENT
// between the two accounts (Expand(Into), then a filter), even with a plain index on the id:
// each batch cost the pair's whole history, about 10 s per 1,000 movements on a pair holding
// 10,000. A uniqueness constraint's index is always sought, and locks the key for the MERGE.
CREATE CONSTRAINT graph_movement_identity IF NOT EXISTS FOR ()-[t:MOVEMENT]-() REQUIRE (t.tenant, t.movementId, t.at, t.src, t.dst) IS UNIQUE;

// A tenant's nodes and events, for deleting a tenant (deleteTenant) in batches.
CREATE INDEX graph_node_tenant IF NOT EXISTS FOR (n:GraphNode) ON (n.tenant);
CREATE INDEX graph_event_tenant IF NOT EXISTS FOR (e:GraphEvent) ON (e.tenant);

// Movements a correction supersedes (decision 0064): apply() records each once by MERGE on this
// constraint, and never adds a MOVEMENT of one.
CREATE CONSTRAINT graph_retraction_identity IF NOT EXISTS FOR (r:GraphRetraction) REQUIRE (r.tenant, r.movementId) IS UNIQUE;

// A retraction finds the original's MOVEMENTs by its id alone (the identity constraint above
// also names the time and both accounts).
CREATE INDEX graph_movement_id IF NOT EXISTS FOR ()-[t:MOVEMENT]-() ON (t.tenant, t.movementId);

// The version of each entity applied (origin: `account:A1`): a lower one the log hands over later
// changes nothing. claimVersions MERGEs on this constraint.
CREATE CONSTRAINT graph_version_identity IF NOT EXISTS FOR (v:GraphVersion) REQUIRE (v.tenant, v.origin) IS UNIQUE;
