// Accepted movement events of a definition that the canonical model does not (yet) count: still
// pending, held or quarantined on a missing reference, rejected by the pipeline. Read in the
// order of the basis' index (event time: (tenant, object, occurred_at); recorded time: the
// primary key, since an event id is a UUIDv7 of its arrival), a bounded number of rows at a time,
// from a position, so an explanation and the paged items list share one reader. Legs are read
// from the event as sent, in code (a raw event is only bytes to the database, and one that could
// not be parsed there must not stop a comparison); a leg's party is its own party_id, else its
// account's holder, as the canonical model resolves it.
import type { Pool, PoolClient } from '../../platform/postgres/pool.ts';
import type { Explanation } from '../../schemas/reconciliations.ts';
import { periodSql, type Definition } from './ledger.ts';

type Db = Pick<Pool | PoolClient, 'query'>;
type UnsettledReason = Explanation['unsettled'][number]['reason'];

export interface UnsettledEvent {
  eventId: string;
  externalId: string;
  occurredAt: Date;
  receivedAt: Date;
  reason: UnsettledReason;
  status: string;
  type: string;
  value: string;
}

// Where a read stopped: the last row read (in the basis' order).
export interface Position {
  at: Date;
  id: string;
}

interface Leg {
  account_id?: string;
  party_id?: string;
  counterparty?: { institution?: string };
}
interface EventData {
  type?: string;
  status?: string;
  rail?: string;
  amount?: { value?: string; asset?: unknown };
  debit?: Leg;
  credit?: Leg;
}

// The UUIDv7 bounds of a millisecond range (an event id's first 48 bits are its arrival in ms).
// A period may start before 1970, where no event id is: the bound is then the first id there is.
function uuidAt(ms: number, fill: '0' | 'f'): string {
  const hex = Math.min(Math.max(ms, 0), 2 ** 48 - 1).toString(16).padStart(12, '0') + fill.repeat(20);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Up to `rows` events of the period after `after`, those of the definition kept; `next` is the
// position to read on from, null when the period has no more.
export async function readUnsettled(db: Db, def: Definition, after: Position | null, rows: number): Promise<{ events: UnsettledEvent[]; next: Position | null }> {
  const recorded = def.basis === 'recorded';
  const { rows: found } = await db.query<{ event_id: string; external_id: string; occurred_at: Date; received_at: Date; status: UnsettledReason; import_id: string | null; raw_event: Buffer }>(
    recorded
      ? `SELECT event_id, external_id, occurred_at, received_at, status, import_id, raw_event FROM inbox_events
          WHERE tenant_id = $1 AND event_id >= $5::uuid AND event_id <= $6::uuid AND ${periodSql('received_at', def)}
            AND object = 'movement' AND status <> 'processed' AND ($2::uuid IS NULL OR event_id > $2::uuid) AND $7::timestamptz IS NULL
          ORDER BY event_id LIMIT $8`
      : `SELECT event_id, external_id, occurred_at, received_at, status, import_id, raw_event FROM inbox_events
          WHERE tenant_id = $1 AND object = 'movement' AND ${periodSql('occurred_at', def)} AND status <> 'processed'
            AND ($7::timestamptz IS NULL OR (occurred_at, event_id) > ($7::timestamptz, $2::uuid)) AND $5::uuid IS NULL AND $6::uuid IS NULL
          ORDER BY occurred_at, event_id LIMIT $8`,
    [
      def.tenantId,
      after?.id ?? null,
      def.from,
      def.to,
      recorded ? uuidAt(def.from.getTime(), '0') : null,
      recorded ? uuidAt(def.to.getTime(), 'f') : null,
      recorded ? null : (after?.at ?? null),
      rows,
    ],
  );
  const last = found.at(-1);
  const next = found.length === rows && last ? { at: recorded ? last.received_at : last.occurred_at, id: last.event_id } : null;
  const events = found.flatMap((row) => {
    try {
      const data = (JSON.parse(row.raw_event.toString('utf8')) as { data?: EventData }).data;
      if (!data || data.amount?.asset !== def.asset || !def.countedStatuses.includes(String(data.status))) return [];
      if (def.types && !def.types.includes(String(data.type))) return [];
      if (def.rails && !def.rails.includes(String(data.rail))) return [];
      if (def.importId && row.import_id !== def.importId) return [];
      return [{ row, data }];
    } catch {
      return [];
    }
  });
  const unnamed = events.flatMap(({ data }) => [data.debit, data.credit]).filter((leg) => leg?.party_id === undefined && leg?.account_id !== undefined);
  const holders = def.subjectKind === 'party' || def.counterparty ? await accountHolders(db, def.tenantId, unnamed.map((leg) => leg!.account_id!)) : new Map<string, string>();
  const partyOf = (leg: Leg | undefined) => leg?.party_id ?? (leg?.account_id !== undefined ? holders.get(leg.account_id) : undefined);
  const isSubject = (leg: Leg | undefined) => (def.subjectKind === 'account' ? leg?.account_id === def.subjectId : partyOf(leg) === def.subjectId);
  const names = (leg: Leg | undefined) =>
    def.counterparty === null || leg?.account_id === def.counterparty || partyOf(leg) === def.counterparty || leg?.counterparty?.institution === def.counterparty;
  const kept = events.filter(({ data }) => {
    if (def.subjectKind === 'tenant') return names(data.debit) || names(data.credit);
    return (def.direction !== 'out' && isSubject(data.credit) && names(data.debit)) || (def.direction !== 'in' && isSubject(data.debit) && names(data.credit));
  });
  return {
    events: kept.map(({ row, data }) => ({
      eventId: row.event_id,
      externalId: row.external_id,
      occurredAt: row.occurred_at,
      receivedAt: row.received_at,
      reason: row.status,
      status: String(data.status),
      type: String(data.type),
      value: String(data.amount?.value ?? ''),
    })),
    next,
  };
}

const SAMPLE = 5;
// One explanation reads at most this many unsettled rows; beyond, it says so (the items list has all).
const EXPLAIN_READ = 2000;

// The unsettled events of the definition, by reason, with their count and a sample of each.
export async function unsettled(db: Db, def: Definition): Promise<{ unsettled: Explanation['unsettled']; truncated: boolean }> {
  const { events, next } = await readUnsettled(db, def, null, EXPLAIN_READ);
  const byReason = new Map<UnsettledReason, Explanation['unsettled'][number]>();
  for (const event of events) {
    const entry = byReason.get(event.reason) ?? { reason: event.reason, count: 0, sample: [] };
    entry.count += 1;
    if (entry.sample.length < SAMPLE) entry.sample.push({ event_id: `evt_${event.eventId}`, external_id: event.externalId, occurred_at: event.occurredAt.toISOString() });
    byReason.set(event.reason, entry);
  }
  return { unsettled: [...byReason.values()].sort((a, b) => a.reason.localeCompare(b.reason)), truncated: next !== null };
}

async function accountHolders(db: Db, tenantId: string, accounts: string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const { rows } = await db.query<{ external_id: string; holder: string }>(
    `SELECT external_id, data->>'holder_party_id' AS holder FROM canonical_entities
      WHERE tenant_id = $1 AND object = 'account' AND external_id = ANY ($2::text[])`,
    [tenantId, [...new Set(accounts)]],
  );
  return new Map(rows.map((r) => [r.external_id, r.holder]));
}
