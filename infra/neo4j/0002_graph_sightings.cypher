// Each sighting behind an observed EDGE (an instrument used, a device or ip seen) is a SIGHTING
// between the same two nodes, as each movement behind a transfer EDGE is a MOVEMENT: a correction
// gives back what the movement it supersedes saw, and a window counts only the sightings inside
// it (docs/decisions/0079-graph-sightings.md). An edge written before these existed keeps its
// count for reads without a window, and has no sighting inside any window.

// One SIGHTING per event and edge: apply() MERGEs on it.
CREATE CONSTRAINT graph_sighting_identity IF NOT EXISTS FOR ()-[s:SIGHTING]-() REQUIRE (s.tenant, s.eventId, s.identity) IS UNIQUE;

// A retraction finds the original's SIGHTINGs by its movement id.
CREATE INDEX graph_sighting_movement IF NOT EXISTS FOR ()-[s:SIGHTING]-() ON (s.tenant, s.movementId);
