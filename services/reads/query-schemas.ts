import { EDGE_TYPES, type EdgeFilter } from '../../platform/graph/port.ts';
import { dateTime, integer, list, minorUnits, optionalText, single, text } from '../../platform/http/query-schema.ts';
import { GRAPH_LIMITS, type GraphLimits } from './graph.ts';

// The query parameters of the canonical reads, declared once for the /v1 API and the console:
// each app makes its query object of these (the console's is strict, see strictQuery).

// The edge filter both graph queries take: an event-time window, edge types and a transfer floor.
const edgeFilterShape = {
  since: dateTime().meta({ description: 'event-time window start (transfers and sightings in it; declared edges valid in it)' }),
  until: dateTime(),
  edge_types: list(EDGE_TYPES),
  // The network holds amounts as 64-bit integers (Neo4j's), so a floor above them is refused, not
  // answered differently by each engine.
  min_amount: minorUnits(2n ** 63n - 1n).meta({ description: 'transfers made of the movements of at least this many base-asset minor units each (at most 2^63-1)' }),
};

export const edgeFilterOf = (query: { since?: Date; until?: Date; edge_types?: (typeof EDGE_TYPES)[number][]; min_amount?: bigint }): EdgeFilter => ({
  since: query.since,
  until: query.until,
  types: query.edge_types,
  minAmount: query.min_amount,
});

export const networkQueryShape = (limits: GraphLimits = GRAPH_LIMITS) => ({
  depth: integer(limits.depth).meta({ description: 'hops over edges of any type and direction' }),
  limit: integer(limits.nodes).meta({ description: 'most nodes returned (the party included)' }),
  ...edgeFilterShape,
});

export const pathsQueryShape = {
  from: text({ required: true }).meta({ description: 'party external_id' }),
  to: text({ required: true }).meta({ description: 'party external_id' }),
  max_depth: integer(GRAPH_LIMITS.pathDepth),
  limit: integer(GRAPH_LIMITS.paths).meta({ description: 'most paths returned' }),
  ...edgeFilterShape,
};

// A party's movements: newest first, either side or one, optionally within [from, to].
export const movementQueryShape = {
  cursor: optionalText({ max: 4096 }),
  limit: integer({ min: 1, max: 200, fallback: 50 }),
  direction: single(['in', 'out', 'both'] as const, 'must be in, out or both'),
  from: dateTime(),
  to: dateTime(),
};
