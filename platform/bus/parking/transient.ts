// Whether a handler's failure says "an engine is away or busy" (retry the same records later,
// without end) rather than "this record cannot be processed" (retry a few times, then park it).
// Parking on a transient error would empty a partition into the parking lot during an outage, so
// anything that looks like a lost connection, a timeout or a rolled-back transaction is transient;
// a record that fails alone with anything else, every attempt, is poison.

// Node's socket and DNS errors, and undici's (fetch: ClickHouse's client, the schema registry).
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH',
  'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'ESOCKETTIMEDOUT',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

// SQLSTATE classes: 08 connection exception, 40 transaction rollback (serialization failure,
// deadlock), 53 insufficient resources, 57 operator intervention (a shutdown, a server not yet
// taking connections), 58 system error; and 55P03, a lock not available. Not 57014, a statement
// cut off by its timeout: the same record would most likely be cut off again, and retrying it
// without end is the stall parking exists to prevent (a replay can try it again later).
const PG_TRANSIENT_CLASSES = new Set(['08', '40', '53', '57', '58']);
const PG_TRANSIENT_STATES = new Set(['55P03']);
const PG_NOT_TRANSIENT_STATES = new Set(['57014']);

// node-postgres reports a lost connection or an exhausted pool with plain messages.
const PG_CLIENT_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end',
];

// Neo4j: its driver marks retriable errors; these codes are the ones it raises for a lost server.
const NEO4J_TRANSIENT_CODES = new Set(['ServiceUnavailable', 'SessionExpired']);

// ClickHouse server errors that come and go with load: memory limit (241), timeouts (159, 209),
// too many queries (202), network (210, 425), table being locked or re-created (473).
const CLICKHOUSE_TRANSIENT = /\bCode: (159|202|209|210|241|425|473)\b/;

// The schema registry's client (@kafkajs/confluent-schema-registry, over mappersmith) turns every
// failure into a ResponseError with a status and a message, and nothing else: a registry that is
// down or busy is a 5xx, 408 or 429, and a connection that failed is a 400 whose message is the
// socket's error ("connect ECONNREFUSED …", "socket hang up"). A 404 (a schema id it does not
// know) is an answer.
function registryUnavailable(status: unknown, message: string): boolean {
  if (typeof status !== 'number') return false;
  if (status >= 500 || status === 408 || status === 429) return true;
  return status === 400 && (message.includes('socket hang up') || [...NETWORK_CODES].some((code) => message.includes(code)));
}

export function isTransient(error: unknown, depth = 0): boolean {
  if (depth > 8 || error === null || typeof error !== 'object') return false;
  const e = error as { code?: unknown; retriable?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown; status?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  if (code && NETWORK_CODES.has(code)) return true;
  if (code && /^[0-9A-Z]{5}$/.test(code) && !PG_NOT_TRANSIENT_STATES.has(code) && (PG_TRANSIENT_CLASSES.has(code.slice(0, 2)) || PG_TRANSIENT_STATES.has(code))) return true;
  if (code && (NEO4J_TRANSIENT_CODES.has(code) || code.startsWith('Neo.TransientError.'))) return true;
  // kafkajs and neo4j-driver both say so themselves. kafkajs calls a group coordinator it could
  // not find (one still loading after a broker start) non-retriable: it comes back.
  if (e.retriable === true) return true;
  if (typeof e.name === 'string' && /^KafkaJS(Connection|RequestTimeout|NumberOfRetriesExceeded|Broker|Lock|GroupCoordinatorNotFound)/.test(e.name)) return true;
  if (e.name === 'ResponseError' && registryUnavailable(e.status, message)) return true;
  if (PG_CLIENT_MESSAGES.some((text) => message.includes(text))) return true;
  if (CLICKHOUSE_TRANSIENT.test(message)) return true;
  if (e.cause !== undefined && isTransient(e.cause, depth + 1)) return true;
  if (Array.isArray(e.errors)) return e.errors.some((inner) => isTransient(inner, depth + 1));
  return false;
}
