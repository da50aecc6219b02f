import type { Family } from '../../schemas/families/index.ts';
import { NONCE_CLAIM_CONFLICT } from '../keys/nonce-ledger.ts';
import type { Pool, PoolClient } from '../postgres/pool.ts';
import { availableTokens } from '../rate-limit/token-buckets.ts';
import type { Admission } from './admission.ts';

// One validated event ready to be committed: the inbox row's content.
export interface PreparedEvent {
  tenantId: string;
  eventId: string;
  object: Family;
  externalId: string;
  // null for facts, and for an entity sent without one.
  sequence: number | null;
  rawEvent: Buffer;
  contentHash: Buffer;
  // The instant of occurred_at (the text as sent stays in rawEvent).
  occurredAt: Date;
  receivedAt: Date;
  correlationId: string | null;
  importId: string | null;
  historical: boolean;
}

export type AcceptOutcome =
  // A new inbox row, its outbox row and its `received` stage row were committed together.
  | { kind: 'accepted'; eventId: string; receivedAt: Date }
  // The same canonical content was already accepted under this dedup key: the original event.
  | { kind: 'duplicate'; eventId: string; receivedAt: Date }
  // The dedup key is taken by different content; nothing was written.
  | { kind: 'conflict' };

type Queryable = Pick<Pool | PoolClient, 'query'>;

const RECEIVED_WORKER = `api:${process.pid}`;

// The tokens a locked bucket row (b) holds at the statement's now ($24), at its tenant's limits (t).
const AVAILABLE = availableTokens('$24', 't.capacity', 't.refill');

// The events' rows, then the inbox, outbox and stage rows of every new one. With admissions, an
// event whose request was not admitted is left out (`admission` is its request's ordinal).
const eventCtes = (admitting: boolean): string => `
     incoming AS (
       SELECT u.tenant_id, u.event_id, u.object, u.external_id, u.sequence,
              substring($6::bytea FROM u.raw_at FOR u.raw_length) AS raw_event,
              substring($7::bytea FROM (u.n::int - 1) * 32 + 1 FOR 32) AS content_hash,
              u.received_at, u.occurred_at, u.correlation_id, u.import_id, u.historical
         FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $14::int[], $15::int[],
                     $8::timestamptz[], $9::timestamptz[], $10::text[], $11::uuid[], $12::boolean[]${admitting ? ', $16::int[]' : ''})
                WITH ORDINALITY AS u(tenant_id, event_id, object, external_id, sequence, raw_at, raw_length,
                                     received_at, occurred_at, correlation_id, import_id, historical${admitting ? ', admission' : ''}, n)${
         admitting ? '\n        WHERE u.admission IS NULL OR u.admission IN (SELECT n FROM granted)' : ''}
     ),
     inbox AS (
       INSERT INTO inbox_events (tenant_id, event_id, object, external_id, sequence, raw_event, content_hash,
                                 received_at, occurred_at, correlation_id, import_id, historical)
       SELECT * FROM incoming
       ON CONFLICT ON CONSTRAINT inbox_events_dedup DO NOTHING
       RETURNING tenant_id, event_id, object, external_id, received_at
     ),
     obligation AS (
       INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at)
       SELECT tenant_id, event_id, 'inbox.' || object, tenant_id || '/' || object || '/' || external_id, received_at FROM inbox
     ),
     stage AS (
       INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker)
       SELECT tenant_id, event_id, 'received', 'ok', received_at, $13 FROM inbox
     )`;

const ACCEPT_SQL = `WITH ${eventCtes(false)}
     SELECT event_id FROM inbox`;

// Admission in the same statement (issue 34: one round trip per request): each request's nonce is
// claimed (a replayed one is not, and its request is neither charged nor written); each tenant's
// bucket is refilled by elapsed time and charged greedily in arrival order: a request is granted
// when its cost fits what is left after the requests granted before it, so a batch that does not
// fit refuses only itself, not the smaller requests behind it (`walk`, one step per request of a
// tenant). Only the events of requests so granted are written. Requests of a tenant whose bucket
// row is missing are left alone (`considered` does not name them) for the caller to make the row
// and send again. The bucket rows stay locked to the commit, so groups of one tenant commit one
// after the other; the nonces are claimed first, in key order, then the buckets are locked in
// tenant order (`locked`, read whole before any is charged), so two groups of the same tenants
// cannot deadlock. A row that `locked` waited for is read as committed, so the refill starts from
// the tokens the other group left.
const ADMIT_AND_ACCEPT_SQL = `WITH RECURSIVE
     adm AS MATERIALIZED (
       SELECT a.* FROM unnest($17::text[], $18::text[], $19::text[], $20::timestamptz[], $21::float8[], $22::float8[], $23::float8[])
                WITH ORDINALITY AS a(tenant_id, key_id, nonce, at, cost, capacity, refill, n)
        WHERE EXISTS (SELECT 1 FROM rate_limit_buckets b WHERE b.tenant_id = a.tenant_id)
     ),
     claimed AS (
       INSERT INTO api_nonces (tenant_id, key_id, nonce, claimed_at)
       SELECT tenant_id, key_id, nonce, at FROM adm ORDER BY tenant_id, key_id, nonce
       ${NONCE_CLAIM_CONFLICT}
       RETURNING tenant_id, key_id, nonce
     ),
     owed AS MATERIALIZED (
       SELECT a.n, a.tenant_id, a.cost, a.capacity, a.refill, row_number() OVER (PARTITION BY a.tenant_id ORDER BY a.n) AS k
         FROM adm a JOIN claimed c ON c.tenant_id = a.tenant_id AND c.key_id = a.key_id AND c.nonce = a.nonce
     ),
     locked AS MATERIALIZED (
       SELECT b.tenant_id, b.tokens, b.refreshed_at FROM rate_limit_buckets b WHERE b.tenant_id IN (SELECT tenant_id FROM owed)
        ORDER BY b.tenant_id FOR UPDATE
     ),
     opening AS MATERIALIZED (
       SELECT b.tenant_id, ${AVAILABLE} AS available
         FROM locked b JOIN (SELECT tenant_id, max(capacity) AS capacity, max(refill) AS refill FROM owed GROUP BY tenant_id) t
           ON t.tenant_id = b.tenant_id
     ),
     walk (tenant_id, k, n, granted, remaining) AS (
       SELECT o.tenant_id, o.k, o.n, o.cost <= p.available, p.available - CASE WHEN o.cost <= p.available THEN o.cost ELSE 0 END
         FROM owed o JOIN opening p ON p.tenant_id = o.tenant_id
        WHERE o.k = 1
       UNION ALL
       SELECT o.tenant_id, o.k, o.n, o.cost <= w.remaining, w.remaining - CASE WHEN o.cost <= w.remaining THEN o.cost ELSE 0 END
         FROM walk w JOIN owed o ON o.tenant_id = w.tenant_id AND o.k = w.k + 1
     ),
     charged AS (
       UPDATE rate_limit_buckets b SET
              tokens = w.remaining,
              refreshed_at = GREATEST(b.refreshed_at, $24)
         FROM opening p
         JOIN (SELECT DISTINCT ON (tenant_id) tenant_id, remaining FROM walk ORDER BY tenant_id, k DESC) w ON w.tenant_id = p.tenant_id
        WHERE b.tenant_id = p.tenant_id
       RETURNING b.tenant_id, b.tokens
     ),
     granted AS (
       SELECT w.n FROM walk w JOIN charged c ON c.tenant_id = w.tenant_id WHERE w.granted
     ),${eventCtes(true)}
     SELECT 'event' AS kind, event_id::text AS id, NULL::float8 AS tokens FROM inbox
     UNION ALL SELECT 'considered', n::text, NULL FROM adm
     UNION ALL SELECT 'claimed', n::text, NULL FROM owed
     UNION ALL SELECT 'granted', n::text, NULL FROM granted
     UNION ALL SELECT 'bucket', tenant_id, tokens FROM charged`;

// Writes the inbox, outbox and stage rows of every new event in ONE statement, so they commit
// together (on a pool: its own transaction; on a client inside BEGIN: the caller's). Rows are
// inserted in dedup-key order so concurrent writers take index locks in the same order and cannot
// deadlock. Events whose dedup key already exists are then resolved against the stored hash.
export async function acceptEvents(db: Queryable, events: PreparedEvent[]): Promise<AcceptOutcome[]> {
  if (events.length === 0) return [];
  const { outcomes, unresolved } = await write(db, events, undefined);
  if (unresolved) throw unresolved.error;
  return outcomes as AcceptOutcome[];
}

// What one statement made of a group's events. `unresolved`: the statement committed, but the
// stored rows that some events repeat could not be read after it; those events (their indices)
// have no outcome, and `error` says why. Every other outcome stands: its event is committed.
export interface GroupOutcomes {
  verdicts: AdmissionVerdict[];
  outcomes: (AcceptOutcome | undefined)[];
  unresolved?: { events: Set<number>; error: unknown };
}

// acceptEvents for a group commit on a pool, whose requests are answered one by one.
export async function acceptGroup(db: Queryable, events: PreparedEvent[]): Promise<GroupOutcomes> {
  return write(db, events, undefined);
}

// What the statement made of one admission.
export type AdmissionVerdict =
  // Its nonce was used within the window: nothing was charged or written for it.
  | { kind: 'replayed' }
  // Its tenant has no bucket row: nothing was claimed, charged or written for it.
  | { kind: 'unbucketed' }
  // Claimed and charged (granted) or claimed and refused for the limit; `tokens` is what its
  // tenant's bucket holds after the statement.
  | { kind: 'charged'; granted: boolean; tokens: number };

// Admits requests and writes the events of those admitted, in one statement (see
// ADMIT_AND_ACCEPT_SQL). `admissionOf[i]` is the index in `admissions` of event i's request (null
// when its request was admitted before). An event of a request not admitted has no outcome.
export async function admitAndAccept(
  db: Queryable,
  admissions: Admission[],
  events: PreparedEvent[],
  admissionOf: (number | null)[],
  now: Date,
): Promise<GroupOutcomes> {
  return write(db, events, { admissions, admissionOf, now });
}

async function write(
  db: Queryable,
  events: PreparedEvent[],
  admitting: { admissions: Admission[]; admissionOf: (number | null)[]; now: Date } | undefined,
): Promise<GroupOutcomes> {
  const order = events.map((_, i) => i).sort((a, b) => compareDedupKey(events[a]!, events[b]!));
  const rows = order.map((i) => events[i]!);
  const bytes = packed(rows);
  const values: unknown[] = [
    rows.map((e) => e.tenantId),
    rows.map((e) => e.eventId),
    rows.map((e) => e.object),
    rows.map((e) => e.externalId),
    rows.map((e) => e.sequence),
    bytes.raw,
    bytes.hashes,
    rows.map((e) => e.receivedAt),
    // PostgreSQL is handed the instant, not the text as sent (its offsets stop at ±15:59).
    rows.map((e) => e.occurredAt.toISOString()),
    rows.map((e) => e.correlationId),
    rows.map((e) => e.importId),
    rows.map((e) => e.historical),
    RECEIVED_WORKER,
    bytes.rawAt,
    bytes.rawLength,
  ];
  if (admitting) {
    const { admissions } = admitting;
    // Ordinals, as the statement numbers its admissions (from 1).
    values.push(
      order.map((i) => {
        const slot = admitting.admissionOf[i];
        return slot === null || slot === undefined ? null : slot + 1;
      }),
      admissions.map((a) => a.tenantId),
      admissions.map((a) => a.keyId),
      admissions.map((a) => a.nonce),
      admissions.map((a) => a.at),
      admissions.map((a) => a.cost),
      admissions.map((a) => a.limits.capacity),
      admissions.map((a) => a.limits.refillPerS),
      admitting.now,
    );
  }
  const result = await db.query<{ kind?: string; id?: string; event_id?: string; tokens?: number | null }>(
    admitting ? { name: 'admit-and-accept-events', text: ADMIT_AND_ACCEPT_SQL, values } : { name: 'accept-events', text: ACCEPT_SQL, values },
  );
  const won = new Set<string>();
  const sets = { considered: new Set<number>(), claimed: new Set<number>(), granted: new Set<number>() };
  const buckets = new Map<string, number>();
  for (const row of result.rows) {
    if (!admitting || row.kind === 'event') won.add((row.event_id ?? row.id)!);
    else if (row.kind === 'bucket') buckets.set(row.id!, row.tokens!);
    else sets[row.kind as keyof typeof sets].add(Number(row.id) - 1);
  }
  const verdicts: AdmissionVerdict[] = (admitting?.admissions ?? []).map((a, i) =>
    !sets.considered.has(i)
      ? { kind: 'unbucketed' }
      : !sets.claimed.has(i)
        ? { kind: 'replayed' }
        : { kind: 'charged', granted: sets.granted.has(i), tokens: buckets.get(a.tenantId)! },
  );
  const admitted = (i: number): boolean => {
    const slot = admitting?.admissionOf[i];
    if (slot === null || slot === undefined) return true;
    const verdict = verdicts[slot]!;
    return verdict.kind === 'charged' && verdict.granted;
  };
  const outcomes: (AcceptOutcome | undefined)[] = events.map((e, i) =>
    !admitted(i) ? undefined : won.has(e.eventId) ? { kind: 'accepted', eventId: e.eventId, receivedAt: e.receivedAt } : { kind: 'conflict' },
  );
  const losers = events.map((e, i) => ({ e, i })).filter(({ e, i }) => admitted(i) && !won.has(e.eventId));
  if (losers.length > 0) {
    try {
      await resolveExisting(db, losers, outcomes);
    } catch (error) {
      return { verdicts, outcomes, unresolved: { events: new Set(losers.map(({ i }) => i)), error } };
    }
  }
  return { verdicts, outcomes };
}

// The events' raw bytes and hashes travel as two bytea parameters, every event's bytes end to end,
// cut apart by offset in the statement: a Buffer parameter is sent as it is (binary), where an
// array of them is sent as hex text, twice the size, built by the client and parsed by the server.
function packed(events: PreparedEvent[]): { raw: Buffer; rawAt: number[]; rawLength: number[]; hashes: Buffer } {
  const rawAt: number[] = new Array(events.length);
  const rawLength: number[] = new Array(events.length);
  let at = 1;
  events.forEach((event, i) => {
    // Cut apart by position: a hash of another length would shift every one after it.
    if (event.contentHash.length !== 32) throw new Error('a content hash is a SHA-256 digest of 32 bytes');
    rawAt[i] = at;
    rawLength[i] = event.rawEvent.length;
    at += event.rawEvent.length;
  });
  return {
    raw: Buffer.concat(events.map((e) => e.rawEvent), at - 1),
    rawAt,
    rawLength,
    hashes: Buffer.concat(events.map((e) => e.contentHash), 32 * events.length),
  };
}

async function resolveExisting(
  db: Queryable,
  losers: Array<{ e: PreparedEvent; i: number }>,
  outcomes: (AcceptOutcome | undefined)[],
): Promise<void> {
  // Looked up by the index prefix (tenant, object, external_id); the sequence is matched here,
  // where NULL equals NULL.
  const { rows } = await db.query<{
    tenant_id: string;
    object: string;
    external_id: string;
    sequence: bigint | null;
    event_id: string;
    content_hash: Buffer;
    received_at: Date;
  }>(
    `SELECT i.tenant_id, i.object, i.external_id, i.sequence, i.event_id, i.content_hash, i.received_at
       FROM inbox_events i
       JOIN (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[]) AS u(tenant_id, object, external_id)) u
         ON i.tenant_id = u.tenant_id AND i.object = u.object AND i.external_id = u.external_id`,
    [losers.map(({ e }) => e.tenantId), losers.map(({ e }) => e.object), losers.map(({ e }) => e.externalId)],
  );
  for (const { e, i } of losers) {
    const existing = rows.find(
      (r) =>
        r.tenant_id === e.tenantId &&
        r.object === e.object &&
        r.external_id === e.externalId &&
        (r.sequence === null ? e.sequence === null : e.sequence !== null && r.sequence === BigInt(e.sequence)),
    );
    if (!existing) throw new Error('inbox dedup conflict without a stored row');
    outcomes[i] = existing.content_hash.equals(e.contentHash)
      ? { kind: 'duplicate', eventId: existing.event_id, receivedAt: existing.received_at }
      : { kind: 'conflict' };
  }
}

function compareDedupKey(a: PreparedEvent, b: PreparedEvent): number {
  return (
    cmp(a.tenantId, b.tenantId) ||
    cmp(a.object, b.object) ||
    cmp(a.externalId, b.externalId) ||
    (a.sequence ?? -1) - (b.sequence ?? -1)
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
