// Every Cypher statement the Neo4j GraphStore runs, each a named constant: the schema of
// infra/neo4j/*.cypher and the statements below. Nothing else reaches the driver: run() (see
// session.ts) takes a Statement, never a string, and refuses one not defined here. Statements are
// fixed text; every value (tenant, keys, times, amounts, edge types, limits) is a parameter, and
// labels and relationship types are a fixed set (GraphNode, GraphEvent, GraphRetraction,
// GraphVersion; EDGE, MOVEMENT), never
// built from data. cypher.test.ts checks each with Neo4j's own Cypher parser and semantic analysis.
//
// The model (docs/decisions/0015-neo4j-graph.md):
//   (:GraphNode {tenant, kind, key, attrs?, updatedAt?})   attrs: the entity's attributes as JSON text
//   (:GraphEvent {tenant, eventId, batch})                  an applied event (idempotence)
//   (:GraphRetraction {tenant, movementId})                 a movement a correction supersedes
//   (:GraphVersion {tenant, origin, sequence?})             the version of an entity applied
//   (a)-[:EDGE {tenant, identity, type, qualifier, origin?, validFrom?, validTo?, attrs?,
//               count, sum?, unpriced, firstAt?, lastAt?}]->(b)   one per edge of the port
//   (a)-[:MOVEMENT {tenant, movementId, at, src, dst, amount?, eventId}]->(b)   one per movement
// Times are epoch milliseconds (UTC) as integers; money is integers in the tenant's base asset's
// minor units (Neo4j integers are 64-bit); counts are integers.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

declare const registered: unique symbol;

export interface Statement {
  readonly name: string;
  readonly text: string;
  // The parameters the text uses ($name), in order of first use: run() passes exactly these.
  readonly params: readonly string[];
  readonly [registered]: true;
}

const registry = new Map<string, Statement>();

function define(name: string, text: string): Statement {
  if (registry.has(name)) throw new Error(`Cypher statement ${name} is defined twice`);
  const params = [...new Set([...text.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
  const statement = Object.freeze({ name, text, params: Object.freeze(params) }) as unknown as Statement;
  registry.set(name, statement);
  return statement;
}

// True only for the very objects this module defined (not for a copy with the same text).
export function isDefinedStatement(statement: unknown): statement is Statement {
  return typeof statement === 'object' && statement !== null && registry.get((statement as Statement).name) === statement;
}

// ---- the model, as the parser's schema check knows it ----

export const GRAPH_MODEL = {
  labels: ['GraphNode', 'GraphEvent', 'GraphRetraction', 'GraphVersion'],
  relationshipTypes: ['EDGE', 'MOVEMENT', 'SIGHTING'],
  propertyKeys: [
    'tenant', 'kind', 'key', 'attrs', 'updatedAt', 'eventId', 'batch', 'identity', 'type', 'qualifier', 'origin',
    'validFrom', 'validTo', 'count', 'sum', 'unpriced', 'firstAt', 'lastAt', 'movementId', 'at', 'amount', 'src', 'dst', 'sequence',
  ],
} as const;

// ---- schema (infra/neo4j) ----

export const NEO4J_SCHEMA_DIR = fileURLToPath(new URL('../../../infra/neo4j/', import.meta.url));

// The statements of a schema file: split on `;`, `//` comment lines dropped.
export function splitSchemaFile(source: string): string[] {
  return source
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('//'))
    .join('\n')
    .split(';')
    .map((s) => s.trim().replace(/\s+/g, ' '))
    .filter((s) => s.length > 0);
}

const SCHEMA_NAME = /^CREATE (?:CONSTRAINT|INDEX) ([a-z0-9_]+) IF NOT EXISTS /;

// Every schema statement of infra/neo4j/*.cypher, files in name order: each must be named and
// IF NOT EXISTS, so applying them all again is harmless.
function loadSchema(dir: string): Statement[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cypher'))
    .sort();
  return files.flatMap((file) =>
    splitSchemaFile(readFileSync(join(dir, file), 'utf8')).map((text) => {
      const name = SCHEMA_NAME.exec(text)?.[1];
      if (!name) throw new Error(`${file}: not a named CREATE CONSTRAINT/INDEX … IF NOT EXISTS statement: ${text}`);
      return define(`schema:${name}`, text);
    }),
  );
}

export const SCHEMA: readonly Statement[] = Object.freeze(loadSchema(NEO4J_SCHEMA_DIR));

// Waits (up to $seconds) for the indexes just created to come online.
export const AWAIT_INDEXES = define('await-indexes', `CALL db.awaitIndexes($seconds)`);

// ---- writes (apply) ----

// Claims events: MERGE on (tenant, eventId) under its uniqueness constraint, so of two writers
// claiming one event the second waits for the first and then finds it. The events this call
// created carry its batch token: those are the fresh ones.
export const CLAIM_EVENTS = define(
  'claim-events',
  `UNWIND $events AS e
MERGE (x:GraphEvent {tenant: e.tenant, eventId: e.eventId})
  ON CREATE SET x.batch = $batch
WITH e, x
WHERE x.batch = $batch
RETURN e.tenant AS tenant, e.eventId AS eventId`,
);

// The version of each entity the graph holds: a version is taken only above it (a first one
// always: a node MERGE creates starts at -2, below any version, a missing sequence counting -1).
// Answers the versions taken.
export const CLAIM_VERSIONS = define(
  'claim-versions',
  `UNWIND $versions AS v
MERGE (x:GraphVersion {tenant: v.tenant, origin: v.origin})
  ON CREATE SET x.sequence = -2
WITH v, x
WHERE coalesce(v.sequence, -1) > coalesce(x.sequence, -1)
SET x.sequence = v.sequence
RETURN v.tenant AS tenant, v.origin AS origin, v.sequence AS sequence`,
);

// An entity's current attributes (JSON text).
export const UPSERT_NODES = define(
  'upsert-nodes',
  `UNWIND $nodes AS r
MERGE (n:GraphNode {tenant: r.tenant, kind: r.kind, key: r.key})
SET n.attrs = r.attrs, n.updatedAt = r.at`,
);

// The edges an entity declared before and its newer version no longer declares are closed at the
// version's time, never deleted.
export const CLOSE_UNDECLARED = define(
  'close-undeclared',
  `UNWIND $entities AS o
MATCH ()-[e:EDGE {tenant: o.tenant, origin: o.origin}]->()
WHERE NOT e.identity IN o.keep AND (e.validTo IS NULL OR e.validTo > o.at)
SET e.validTo = o.at`,
);

// Declared edges (holds, a party's identifiers, relationships): validity and attributes are the
// latest declaration's; first and last declared widen.
export const UPSERT_DECLARED = define(
  'upsert-declared',
  `UNWIND $edges AS r
MERGE (a:GraphNode {tenant: r.tenant, kind: r.fromKind, key: r.fromKey})
MERGE (b:GraphNode {tenant: r.tenant, kind: r.toKind, key: r.toKey})
MERGE (a)-[e:EDGE {tenant: r.tenant, identity: r.identity}]->(b)
  ON CREATE SET e.type = r.type, e.qualifier = r.qualifier, e.count = 0, e.unpriced = 0
SET e.origin = r.origin, e.validFrom = r.validFrom, e.validTo = r.validTo, e.attrs = r.attrs,
    e.firstAt = CASE WHEN e.firstAt IS NULL OR r.at < e.firstAt THEN r.at ELSE e.firstAt END,
    e.lastAt = CASE WHEN e.lastAt IS NULL OR r.at > e.lastAt THEN r.at ELSE e.lastAt END`,
);

// Movements, each once (MERGE on its key, the graph_movement_identity constraint, whose index the
// MERGE seeks; the one this row created carries the row's event id), and the pair's transfer edge
// adds up exactly the movements created. The amounts are added with `+`, not sum(): past 2^63 − 1
// sum() of integers turns into a float without a word (seen on 5.26), `+` fails the statement.
export const ADD_TRANSFERS = define(
  'add-transfers',
  `UNWIND $movements AS m
WITH m WHERE NOT EXISTS { MATCH (:GraphRetraction {tenant: m.tenant, movementId: m.movementId}) }
MERGE (a:GraphNode {tenant: m.tenant, kind: 'account', key: m.src})
MERGE (b:GraphNode {tenant: m.tenant, kind: 'account', key: m.dst})
MERGE (a)-[t:MOVEMENT {tenant: m.tenant, movementId: m.movementId, at: m.at, src: m.src, dst: m.dst}]->(b)
  ON CREATE SET t.amount = m.amount, t.eventId = m.eventId
WITH a, b, m, t
WHERE t.eventId = m.eventId
WITH a, b, m.tenant AS tenant, m.identity AS identity, count(t) AS added, collect(t.amount) AS amounts,
     count(t) - count(t.amount) AS unpriced, min(t.at) AS firstAt, max(t.at) AS lastAt
MERGE (a)-[e:EDGE {tenant: tenant, identity: identity}]->(b)
  ON CREATE SET e.type = 'transfer', e.qualifier = '', e.count = 0, e.sum = 0, e.unpriced = 0
SET e.count = e.count + added, e.sum = reduce(total = coalesce(e.sum, 0), amount IN amounts | total + amount),
    e.unpriced = e.unpriced + unpriced,
    e.firstAt = CASE WHEN e.firstAt IS NULL OR firstAt < e.firstAt THEN firstAt ELSE e.firstAt END,
    e.lastAt = CASE WHEN e.lastAt IS NULL OR lastAt > e.lastAt THEN lastAt ELSE e.lastAt END`,
);

// Movements a correction supersedes: each recorded once (ADD_TRANSFERS never adds one), and their
// MOVEMENTs deleted, each pair's transfer EDGE giving back what they added (its first and last
// instants those of the movements left; an edge left with none deleted). $sep joins the parts of
// an edge identity (shared/apply.ts, edgeIdentity).
export const RETRACT_TRANSFERS = define(
  'retract-transfers',
  `UNWIND $retractions AS r
MERGE (:GraphRetraction {tenant: r.tenant, movementId: r.movementId})
WITH r
MATCH (a)-[t:MOVEMENT {tenant: r.tenant, movementId: r.movementId}]->(b)
WITH a, b, r.tenant AS tenant, 'transfer' + $sep + 'account' + $sep + t.src + $sep + 'account' + $sep + t.dst + $sep AS identity, t, t.amount AS amount
DELETE t
WITH a, b, tenant, identity, count(*) AS removed, collect(amount) AS amounts
MATCH (a)-[e:EDGE {tenant: tenant, identity: identity}]->(b)
OPTIONAL MATCH (a)-[m:MOVEMENT {tenant: tenant}]->(b)
WITH e, removed, amounts, min(m.at) AS firstAt, max(m.at) AS lastAt
SET e.count = e.count - removed, e.sum = reduce(total = coalesce(e.sum, 0), amount IN amounts | total - amount),
    e.unpriced = e.unpriced - (removed - size(amounts)), e.firstAt = firstAt, e.lastAt = lastAt
WITH e WHERE e.count = 0
DELETE e`,
);

// Observed edges (an instrument used, a device or ip seen): each sighting a SIGHTING of its
// event beside the edge (none of a retracted movement), the EDGE adding up exactly those added.
// The events were claimed first, so each sighting is new.
export const ADD_OBSERVED = define(
  'add-observed',
  `UNWIND $observed AS r
WITH r WHERE r.movementId IS NULL OR NOT EXISTS { MATCH (:GraphRetraction {tenant: r.tenant, movementId: r.movementId}) }
MERGE (a:GraphNode {tenant: r.tenant, kind: r.fromKind, key: r.fromKey})
MERGE (b:GraphNode {tenant: r.tenant, kind: r.toKind, key: r.toKey})
MERGE (a)-[s:SIGHTING {tenant: r.tenant, eventId: r.eventId, identity: r.identity}]->(b)
  ON CREATE SET s.at = r.at, s.movementId = r.movementId
WITH a, b, r.tenant AS tenant, r.identity AS identity, r.type AS type, count(s) AS seen, min(s.at) AS firstAt, max(s.at) AS lastAt
ORDER BY tenant, identity
MERGE (a)-[e:EDGE {tenant: tenant, identity: identity}]->(b)
  ON CREATE SET e.type = type, e.qualifier = '', e.count = 0, e.unpriced = 0
SET e.count = e.count + seen,
    e.firstAt = CASE WHEN e.firstAt IS NULL OR firstAt < e.firstAt THEN firstAt ELSE e.firstAt END,
    e.lastAt = CASE WHEN e.lastAt IS NULL OR lastAt > e.lastAt THEN lastAt ELSE e.lastAt END`,
);

// The SIGHTINGs of movements a correction supersedes deleted, each EDGE giving back what they
// added (its first and last instants those of the sightings left; an edge left with none deleted).
export const RETRACT_SIGHTINGS = define(
  'retract-sightings',
  `UNWIND $retractions AS r
MATCH (a)-[s:SIGHTING {tenant: r.tenant, movementId: r.movementId}]->(b)
WITH a, b, r.tenant AS tenant, s.identity AS identity, s
DELETE s
WITH a, b, tenant, identity, count(*) AS removed
MATCH (a)-[e:EDGE {tenant: tenant, identity: identity}]->(b)
OPTIONAL MATCH (a)-[m:SIGHTING {tenant: tenant, identity: identity}]->(b)
WITH e, removed, min(m.at) AS firstAt, max(m.at) AS lastAt
SET e.count = e.count - removed, e.firstAt = firstAt, e.lastAt = lastAt
WITH e WHERE e.count = 0
DELETE e`,
);

// ---- reads ----

export const NODE = define(
  'node',
  `OPTIONAL MATCH (n:GraphNode {tenant: $tenant, kind: $kind, key: $key})
RETURN n IS NOT NULL AS known, n.attrs AS attrs`,
);

export const NODE_ATTRS = define(
  'node-attrs',
  `UNWIND $nodes AS u
MATCH (n:GraphNode {tenant: $tenant, kind: u.kind, key: u.key})
WHERE n.attrs IS NOT NULL
RETURN n.kind AS kind, n.key AS key, n.attrs AS attrs`,
);

// The stored edges touching the frontier (either direction) that pass the filter: declared edges
// valid, observed edges seen, at some time in [since, until]; transfer edges left out when they
// are rebuilt from movements ($rebuilt). With $within ([kind, key] pairs), only edges whose other
// end is one of them. An observed edge read in a window (`windowed`) is its SIGHTINGs inside it
// (how many, the first and the last; the subquery's aggregate answers one row also when it
// matches nothing), and one seen only outside it is left out.
export const INCIDENT_EDGES = define(
  'incident-edges',
  `UNWIND $frontier AS f
MATCH (n:GraphNode {tenant: $tenant, kind: f.kind, key: f.key})-[e:EDGE {tenant: $tenant}]-(o:GraphNode {tenant: $tenant})
WHERE ($types IS NULL OR e.type IN $types)
  AND NOT ($rebuilt AND e.type = 'transfer')
  AND ($until IS NULL OR coalesce(e.validFrom, e.firstAt) IS NULL OR coalesce(e.validFrom, e.firstAt) <= $until)
  AND ($since IS NULL OR coalesce(e.validTo, CASE WHEN e.origin IS NULL THEN e.lastAt END) IS NULL
       OR coalesce(e.validTo, CASE WHEN e.origin IS NULL THEN e.lastAt END) >= $since)
  AND ($within IS NULL OR [o.kind, o.key] IN $within)
WITH e, ($since IS NOT NULL OR $until IS NOT NULL) AND e.origin IS NULL AND e.type <> 'transfer' AS windowed
CALL (e, windowed) {
  WITH e, startNode(e) AS a, endNode(e) AS b WHERE windowed
  MATCH (a)-[s:SIGHTING {tenant: $tenant, identity: e.identity}]->(b)
  WHERE ($since IS NULL OR s.at >= $since) AND ($until IS NULL OR s.at <= $until)
  RETURN count(s) AS seen, min(s.at) AS seenFirst, max(s.at) AS seenLast
}
WITH e, windowed, seen, seenFirst, seenLast WHERE NOT windowed OR seen > 0
RETURN startNode(e).kind AS fromKind, startNode(e).key AS fromKey, e.type AS type, endNode(e).kind AS toKind,
       endNode(e).key AS toKey, e.qualifier AS qualifier, e.validFrom AS validFrom, e.validTo AS validTo,
       CASE WHEN windowed THEN seen ELSE e.count END AS count, e.sum AS sum, e.unpriced AS unpriced,
       CASE WHEN windowed THEN seenFirst ELSE e.firstAt END AS firstAt, CASE WHEN windowed THEN seenLast ELSE e.lastAt END AS lastAt,
       e.attrs AS attrs
LIMIT $limit`,
);

// Transfer edges rebuilt from the movements that pass a window and a minimum amount (unpriced
// ones never pass a minimum), one row per ordered pair; each movement counted once even when both
// its accounts are in the frontier.
export const INCIDENT_TRANSFERS = define(
  'incident-transfers',
  `UNWIND $accounts AS account
MATCH (n:GraphNode {tenant: $tenant, kind: 'account', key: account})-[t:MOVEMENT {tenant: $tenant}]-(o:GraphNode {tenant: $tenant})
WHERE ($since IS NULL OR t.at >= $since) AND ($until IS NULL OR t.at <= $until)
  AND ($minAmount IS NULL OR t.amount >= $minAmount)
  AND ($within IS NULL OR o.key IN $within)
WITH DISTINCT t
WITH startNode(t).key AS src, endNode(t).key AS dst, t
RETURN src, dst, count(t) AS count, sum(t.amount) AS sum, count(t) - count(t.amount) AS unpriced,
       min(t.at) AS firstAt, max(t.at) AS lastAt
LIMIT $limit`,
);

// INCIDENT_EDGES for many frontiers at once, each request its own frontier, types, window and
// limit (no `within`): for each request, its first `limit` edges.
export const INCIDENT_EDGES_MANY = define(
  'incident-edges-many',
  `UNWIND $requests AS r
CALL (r) {
  UNWIND r.frontier AS f
  MATCH (n:GraphNode {tenant: $tenant, kind: f.kind, key: f.key})-[e:EDGE {tenant: $tenant}]-(o:GraphNode {tenant: $tenant})
  WHERE (r.types IS NULL OR e.type IN r.types)
    AND NOT (r.rebuilt AND e.type = 'transfer')
    AND (r.until IS NULL OR coalesce(e.validFrom, e.firstAt) IS NULL OR coalesce(e.validFrom, e.firstAt) <= r.until)
    AND (r.since IS NULL OR coalesce(e.validTo, CASE WHEN e.origin IS NULL THEN e.lastAt END) IS NULL
         OR coalesce(e.validTo, CASE WHEN e.origin IS NULL THEN e.lastAt END) >= r.since)
  WITH r, e, (r.since IS NOT NULL OR r.until IS NOT NULL) AND e.origin IS NULL AND e.type <> 'transfer' AS windowed
  CALL (r, e, windowed) {
    WITH r, e, startNode(e) AS a, endNode(e) AS b WHERE windowed
    MATCH (a)-[s:SIGHTING {tenant: $tenant, identity: e.identity}]->(b)
    WHERE (r.since IS NULL OR s.at >= r.since) AND (r.until IS NULL OR s.at <= r.until)
    RETURN count(s) AS seen, min(s.at) AS seenFirst, max(s.at) AS seenLast
  }
  WITH e, windowed, seen, seenFirst, seenLast WHERE NOT windowed OR seen > 0
  WITH collect({fromKind: startNode(e).kind, fromKey: startNode(e).key, type: e.type, toKind: endNode(e).kind,
                toKey: endNode(e).key, qualifier: e.qualifier, validFrom: e.validFrom, validTo: e.validTo,
                count: CASE WHEN windowed THEN seen ELSE e.count END, sum: e.sum, unpriced: e.unpriced,
                firstAt: CASE WHEN windowed THEN seenFirst ELSE e.firstAt END, lastAt: CASE WHEN windowed THEN seenLast ELSE e.lastAt END,
                attrs: e.attrs}) AS rows
  RETURN rows[0..r.limit] AS edges
}
RETURN r.i AS i, edges`,
);

// INCIDENT_TRANSFERS for many sets of accounts at once, each request its own window, minimum and
// limit (no `within`): for each request, its first `limit` pairs.
export const INCIDENT_TRANSFERS_MANY = define(
  'incident-transfers-many',
  `UNWIND $requests AS r
CALL (r) {
  UNWIND r.accounts AS account
  MATCH (n:GraphNode {tenant: $tenant, kind: 'account', key: account})-[t:MOVEMENT {tenant: $tenant}]-(o:GraphNode {tenant: $tenant})
  WHERE (r.since IS NULL OR t.at >= r.since) AND (r.until IS NULL OR t.at <= r.until)
    AND (r.minAmount IS NULL OR t.amount >= r.minAmount)
  WITH DISTINCT t
  WITH startNode(t).key AS src, endNode(t).key AS dst, t
  WITH src, dst, count(t) AS count, sum(t.amount) AS sum, count(t) - count(t.amount) AS unpriced, min(t.at) AS firstAt, max(t.at) AS lastAt
  WITH collect({src: src, dst: dst, count: count, sum: sum, unpriced: unpriced, firstAt: firstAt, lastAt: lastAt}) AS rows
  RETURN rows[0..r.limit] AS pairs
}
RETURN r.i AS i, pairs`,
);

// The latest movements (at most $recent, in the filter's window) of each pair, latest first.
export const RECENT_MOVEMENTS = define(
  'recent-movements',
  `UNWIND $pairs AS p
CALL (p) {
  MATCH (:GraphNode {tenant: $tenant, kind: 'account', key: p.src})-[t:MOVEMENT {tenant: $tenant}]->(:GraphNode {tenant: $tenant, kind: 'account', key: p.dst})
  WHERE ($since IS NULL OR t.at >= $since) AND ($until IS NULL OR t.at <= $until)
    AND ($minAmount IS NULL OR t.amount >= $minAmount)
  RETURN t
  ORDER BY t.at DESC, t.movementId DESC
  LIMIT $recent
}
RETURN p.i AS i, t.movementId AS movementId, t.at AS at, t.amount AS amount`,
);

// One hop more for every partial cycle (of one search or many): priced movements out of its last
// account, no earlier than its last movement, no later than its search's end, within the
// tolerance of its first hop's amount.
export const CYCLE_STEP = define(
  'cycle-step',
  `UNWIND $paths AS u
MATCH (:GraphNode {tenant: $tenant, kind: 'account', key: u.node})-[t:MOVEMENT {tenant: $tenant}]->(d:GraphNode {tenant: $tenant})
WHERE t.at >= u.after AND t.at <= u.until AND t.amount IS NOT NULL
  AND (u.low IS NULL OR t.amount >= u.low) AND (u.high IS NULL OR t.amount <= u.high)
RETURN u.i AS i, t.movementId AS movementId, u.node AS src, d.key AS dst, t.at AS at, t.amount AS amount
LIMIT $limit`,
);

// The accounts that sent to ($inbound) or received from an account in a window, largest sum first
// (ties by account), at most $limit listed; the totals are over all of them. One branch of the
// subquery runs (the other's WHERE is false before it expands), so the expansion is directed.
export const FLOW = define(
  'flow',
  `MATCH (x:GraphNode {tenant: $tenant, kind: 'account', key: $account})
CALL (x) {
  MATCH (x)<-[t:MOVEMENT {tenant: $tenant}]-(c:GraphNode {tenant: $tenant})
  WHERE $inbound
  RETURN t, c
  UNION ALL
  MATCH (x)-[t:MOVEMENT {tenant: $tenant}]->(c:GraphNode {tenant: $tenant})
  WHERE NOT $inbound
  RETURN t, c
}
WITH t, c
WHERE t.at >= $since AND t.at <= $until AND c.key <> $account
WITH c.key AS account, count(t) AS movements, sum(t.amount) AS priced, count(t) - count(t.amount) AS unpriced,
     min(t.at) AS firstAt, max(t.at) AS lastAt
ORDER BY priced DESC, account
WITH collect({account: account, count: movements, sum: priced, unpriced: unpriced, firstAt: firstAt, lastAt: lastAt}) AS rows
RETURN size(rows) AS accounts, reduce(n = 0, r IN rows | n + r.count) AS totalCount,
       reduce(s = 0, r IN rows | s + r.sum) AS totalSum, rows[0..$limit] AS counterparties`,
);

// For each window: the distinct other accounts on one side of its account (`key`) in it, up to
// $atMost. DISTINCT and LIMIT stream, so a hub's movements are not all read. A window whose
// account is not in the graph has no row.
export const COUNTERPARTY_COUNTS = define(
  'counterparty-counts',
  `UNWIND $windows AS w
MATCH (x:GraphNode {tenant: $tenant, kind: 'account', key: w.key})
CALL (x, w) {
  CALL (x) {
    MATCH (x)<-[t:MOVEMENT {tenant: $tenant}]-(c:GraphNode {tenant: $tenant})
    WHERE $inbound
    RETURN t, c
    UNION ALL
    MATCH (x)-[t:MOVEMENT {tenant: $tenant}]->(c:GraphNode {tenant: $tenant})
    WHERE NOT $inbound
    RETURN t, c
  }
  WITH t, c
  WHERE t.at >= w.since AND t.at <= w.until AND c.key <> w.key
  WITH DISTINCT c.key AS account
  LIMIT $atMost
  RETURN count(*) AS accounts
}
RETURN w.i AS i, accounts`,
);

// For each request: source → intermediaries → an account gathering from at least
// minIntermediaries of them, each intermediary's outflow no earlier than its first inflow from
// the source, all in the request's window; how many such accounts, and the first `limit`. A
// request with none may have no row.
export const SCATTER_GATHER = define(
  'scatter-gather',
  `UNWIND $requests AS r
CALL (r) {
  MATCH (:GraphNode {tenant: $tenant, kind: 'account', key: r.source})-[s:MOVEMENT {tenant: $tenant}]->(mid:GraphNode {tenant: $tenant})
  WHERE s.at >= r.since AND s.at <= r.until AND mid.key <> r.source
  WITH mid, min(s.at) AS scatteredAt
  MATCH (mid)-[t:MOVEMENT {tenant: $tenant}]->(g:GraphNode {tenant: $tenant})
  WHERE t.at >= scatteredAt AND t.at <= r.until AND g.key <> r.source AND g.key <> mid.key
  WITH g.key AS account, mid.key AS relay, sum(t.amount) AS priced
  ORDER BY relay
  WITH account, collect(relay) AS relays, sum(priced) AS total
  WHERE size(relays) >= r.minIntermediaries
  WITH account, relays, total
  ORDER BY size(relays) DESC, total DESC, account
  WITH collect({account: account, intermediaries: relays, sum: total}) AS rows
  RETURN size(rows) AS found, rows[0..r.limit] AS gathers
}
RETURN r.i AS i, found, gathers`,
);

// For each request, each identifier, device or ip the party shares (now or before) and the other
// parties sharing it, through links valid or first seen by its `until`: the first `limit` (most
// parties first). A request with none may have no row.
export const SHARED_ATTRIBUTES = define(
  'shared-attributes',
  `UNWIND $requests AS r
CALL (r) {
  MATCH (:GraphNode {tenant: $tenant, kind: 'party', key: r.party})-[mine:EDGE {tenant: $tenant, type: 'shares'}]->(via:GraphNode {tenant: $tenant})
        <-[theirs:EDGE {tenant: $tenant, type: 'shares'}]-(other:GraphNode {tenant: $tenant, kind: 'party'})
  WHERE other.key <> r.party
    AND (coalesce(mine.validFrom, mine.firstAt) IS NULL OR coalesce(mine.validFrom, mine.firstAt) <= r.until)
    AND (coalesce(theirs.validFrom, theirs.firstAt) IS NULL OR coalesce(theirs.validFrom, theirs.firstAt) <= r.until)
  WITH DISTINCT via, other.key AS party
  ORDER BY party
  WITH via, collect(party) AS parties
  ORDER BY size(parties) DESC, via.kind, via.key
  WITH collect({kind: via.kind, key: via.key, parties: parties}) AS rows
  RETURN rows[0..r.limit] AS shared
}
RETURN r.i AS i, shared`,
);

// For each request, the accounts the party holds or held at any time up to its instant.
export const HOLDINGS = define(
  'holdings',
  `UNWIND $requests AS r
CALL (r) {
  MATCH (:GraphNode {tenant: $tenant, kind: 'party', key: r.party})-[e:EDGE {tenant: $tenant, type: 'holds'}]->(a:GraphNode {tenant: $tenant, kind: 'account'})
  WHERE coalesce(e.validFrom, e.firstAt) IS NULL OR coalesce(e.validFrom, e.firstAt) <= r.until
  RETURN DISTINCT a.key AS account
  ORDER BY account
  LIMIT $limit
}
RETURN r.i AS i, account`,
);

// ---- housekeeping ----

// A tenant's network, at most $batch nodes (with their edges and movements) per call.
export const DELETE_TENANT_NODES = define(
  'delete-tenant-nodes',
  `MATCH (n:GraphNode {tenant: $tenant})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted`,
);

export const DELETE_TENANT_EVENTS = define(
  'delete-tenant-events',
  `MATCH (x:GraphEvent {tenant: $tenant})
WITH x LIMIT $batch
DELETE x
RETURN count(*) AS deleted`,
);
export const DELETE_TENANT_RETRACTIONS = define(
  'delete-tenant-retractions',
  `MATCH (x:GraphRetraction {tenant: $tenant})
WITH x LIMIT $batch
DELETE x
RETURN count(*) AS deleted`,
);
export const DELETE_TENANT_VERSIONS = define(
  'delete-tenant-versions',
  `MATCH (x:GraphVersion {tenant: $tenant})
WITH x LIMIT $batch
DELETE x
RETURN count(*) AS deleted`,
);

// Every statement, schema first.
export const STATEMENTS: readonly Statement[] = Object.freeze([...registry.values()]);
