import type { PoolClient } from '../../platform/postgres/pool.ts';
import { ConcurrentChange } from './concurrent-change.ts';
import { canonicalChangeTopic, changePartitionKey, type CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import type { Family } from '../../schemas/families/index.ts';
import type { EventKey, StageEntry } from './event-status.ts';
import type { Normalization } from './fx.ts';

// One event of a batch that is ready: its change record carries everything the model's fact rows
// hold (a movement's resolved legs, a control event's subject), so the record is the one source
// of the statement below.
export interface ReadyEvent {
  key: EventKey;
  // It had been held (or quarantined): its hold is cleared and its stage entry says so.
  wasHeld: boolean;
  change: CanonicalChange;
  // A movement's conversion into the tenant's base asset (undefined when already in it).
  normalized?: Normalization;
  links?: Record<string, string>;
}

// The rest of a batch in one statement: facts (movements with their links, control events;
// entities were written before, see writeEntities), one change record per event on the log, inbox
// rows `processed` and their `canonical`/`ok` stage entries. Released holds are cleared by
// statements of their own, run only when the batch releases any (as part of the same statement,
// their tables were read whole on every batch).
// Column arrays, so that PostgreSQL builds a jsonb tree only of a movement's conversion (when
// there is one): a change record is stored as the text it was written as, a fact's data as json
// (the same text, checked as JSON but not rebuilt into jsonb, decision 0051), and the fact's
// other columns come typed. (From one JSON document, json_to_recordset and the document's own
// validation lexed every record twice, and a fact's record a third time into jsonb: most of the
// statement's time.)
// A record's data travels once (decision 0045): a change record's text is its head (every member
// but data, its last) joined here to its data, which is also the text of a fact's data column.
// The JSON texts travel as one parameter each, joined by U+001E, which JSON text never holds
// unescaped: as array literals, every quote in them was escaped in JavaScript (node-postgres),
// which cost more than the statement saved. An empty text there stands for null.
// Inbox rows move to `processed` only from the status they were read with (pending; held or
// quarantined for a release), and the statement's count says whether all did: a batch whose rows
// were not locked first (processor.ts, attemptAssumed) is so never committed over an event that
// moved on meanwhile (ConcurrentChange: the caller rolls back). Under a lock it always holds.
// The log's rows are inserted in array order (entities, then facts, each in log order), so a
// change is published exactly when it is committed. Facts are written once, keyed by their
// external id: corrections, reversals and refunds are new movements whose links name the
// original. A movement is inserted without ON CONFLICT: the inbox takes one event per movement id,
// and an event is processed once, so only a redelivery of a processed event meets its row; the
// unique violation then rolls the batch back (processor.ts takes it again with its rows locked),
// as the status count would, and a speculative insertion per movement cost PostgreSQL more than
// a tenth of the row's writing (decision 0053). duration_ms is the batch's time up to this
// statement.
const COMMIT_BATCH_SQL = `
  WITH r AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::boolean[], string_to_array($6, chr(30)),
                         $7::text[], $8::timestamptz[], $9::timestamptz[], $10::text[], $11::text[], $12::numeric[],
                         $13::text[], $14::smallint[], $15::text[], $16::text[], $17::text[], $18::text[],
                         string_to_array($19, chr(30), '')::jsonb[], string_to_array($20, chr(30)),
                         string_to_array($21, chr(30), '')::json[], $22::text[], $23::text[])
      AS r(t, e, topic, k, h, p, x, o, rcv, type, status, amount_value, amount_asset, amount_scale,
           debit_account_id, debit_party_id, credit_account_id, credit_party_id, n, d, l, subject_kind, subject_id)
  ),
  movements AS (
    INSERT INTO canonical_movements (tenant_id, external_id, event_id, occurred_at, received_at, type, status,
                                     amount_value, amount_asset, amount_scale, debit_account_id, debit_party_id,
                                     credit_account_id, credit_party_id, normalized, data)
    SELECT t, x, e, o, rcv, type, status, amount_value, amount_asset, amount_scale, debit_account_id, debit_party_id,
           credit_account_id, credit_party_id, n, d::json
      FROM r WHERE topic = 'canonical.movement'
  ),
  links AS (
    INSERT INTO canonical_movement_links (tenant_id, from_id, relation, to_id)
    SELECT r.t, r.x, l.key, l.value FROM r CROSS JOIN LATERAL json_each_text(r.l) AS l WHERE r.l IS NOT NULL
    ON CONFLICT DO NOTHING
  ),
  controls AS (
    INSERT INTO canonical_control_events (tenant_id, external_id, event_id, occurred_at, received_at, type,
                                          subject_kind, subject_external_id, data)
    SELECT t, x, e, o, rcv, type, subject_kind, subject_id, d::json FROM r WHERE topic = 'canonical.control_event'
    ON CONFLICT (tenant_id, external_id) DO NOTHING
  ),
  changes AS (
    INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload)
    SELECT t, e, topic, k, $24::timestamptz, p || ',"data":' || d || '}' FROM r
  ),
  done AS (
    UPDATE inbox_events i SET status = 'processed', status_reason = NULL, terminal_at = $24, attempts = attempts + 1
      FROM r WHERE i.tenant_id = r.t AND i.event_id = r.e
       AND CASE WHEN r.h THEN i.status IN ('held', 'quarantined') ELSE i.status = 'pending' END
    RETURNING i.tenant_id, i.event_id, r.h
  )
  INSERT INTO event_stages (tenant_id, event_id, stage, status, at, worker, duration_ms, detail)
  SELECT done.tenant_id, done.event_id, 'canonical', 'ok', $24, $25, $26, CASE WHEN done.h THEN '{"released": true}'::jsonb END
    FROM done`;

export async function commitBatch(db: Pick<PoolClient, 'query'>, events: ReadyEvent[], entry: Omit<StageEntry, 'stage' | 'status' | 'detail'>): Promise<void> {
  if (events.length === 0) return;
  const released = events.filter((e) => e.wasHeld).map((e) => e.key);
  if (released.length > 0) {
    const pairs = [released.map((k) => k.tenantId), released.map((k) => k.eventId)];
    await db.query('DELETE FROM held_references r USING unnest($1::text[], $2::uuid[]) AS u(t, e) WHERE r.tenant_id = u.t AND r.event_id = u.e', pairs);
    await db.query('DELETE FROM held_events h USING unnest($1::text[], $2::uuid[]) AS u(t, e) WHERE h.tenant_id = u.t AND h.event_id = u.e', pairs);
  }
  // Typed columns, one array each (null where an event's kind has no such column), and the JSON
  // texts, each column one string (see above).
  const column = () => new Array<unknown>(events.length).fill(null);
  const tenants = column();
  const ids = column();
  const topics = column();
  const keys = column();
  const held = column();
  const externalIds = column();
  const occurred = column();
  const received = column();
  const types = column();
  const statuses = column();
  const amounts = column();
  const assets = column();
  const scales = column();
  const debitAccounts = column();
  const debitParties = column();
  const creditAccounts = column();
  const creditParties = column();
  const subjectKinds = column();
  const subjectIds = column();
  const heads: string[] = [];
  const normalized: string[] = [];
  const data: string[] = [];
  const links: string[] = [];
  events.forEach((event, i) => {
    const { change } = event;
    // A record's data is serialised once, and sent once: a fact's row and the record share it
    // (data is every record's last member).
    const { data: content, ...rest } = change;
    const dataJson = JSON.stringify(content);
    const head = JSON.stringify(rest);
    tenants[i] = event.key.tenantId;
    ids[i] = event.key.eventId;
    topics[i] = canonicalChangeTopic(change.object as Family);
    keys[i] = changePartitionKey(change);
    held[i] = event.wasHeld;
    heads.push(head.slice(0, -1));
    data.push(dataJson);
    const fact = change.object === 'movement' || change.object === 'control_event';
    normalized.push(change.object === 'movement' && event.normalized ? JSON.stringify(event.normalized) : '');
    links.push(change.object === 'movement' && event.links && hasKeys(event.links) ? JSON.stringify(event.links) : '');
    if (fact) {
      externalIds[i] = change.external_id;
      occurred[i] = change.occurred_at;
      received[i] = change.received_at;
      types[i] = change.type;
    }
    if (change.object === 'movement') {
      statuses[i] = change.status;
      amounts[i] = change.amount.value;
      assets[i] = change.amount.asset;
      scales[i] = change.amount.scale;
      debitAccounts[i] = change.debit.account_id;
      debitParties[i] = change.debit.party_id;
      creditAccounts[i] = change.credit.account_id;
      creditParties[i] = change.credit.party_id;
    } else if (change.object === 'control_event') {
      subjectKinds[i] = change.subject.kind;
      subjectIds[i] = change.subject.external_id;
    }
  });
  const { rowCount } = await db.query({
    name: 'canonical-commit-batch',
    text: COMMIT_BATCH_SQL,
    values: [
      tenants, ids, topics, keys, held, heads.join(SEPARATOR), externalIds, occurred, received, types, statuses, amounts,
      assets, scales, debitAccounts, debitParties, creditAccounts, creditParties, normalized.join(SEPARATOR),
      data.join(SEPARATOR), links.join(SEPARATOR), subjectKinds, subjectIds, entry.at, entry.worker, entry.durationMs,
    ],
  });
  // One stage row per inbox row moved to processed.
  if (rowCount !== events.length) throw new ConcurrentChange('commit', events.length, rowCount ?? 0);
}

// Joins the JSON texts of a column (see above).
const SEPARATOR = '\u001e';

function hasKeys(object: Record<string, string>): boolean {
  for (const _ in object) return true;
  return false;
}
