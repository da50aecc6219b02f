// The difference items of a reconciliation, every one, page by page: first the movements of its
// definition the totals leave out (superseded by a correction, cancelled by a reversal pair, or in
// a status not counted; movement-items.ts), then the accepted events not (yet) counted (pending,
// held, quarantined, rejected), read in their index order. Either way a page reads from a position
// on and writes nothing; the position says which source and where.
import { ID_PREFIXES } from '../../platform/ids.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { movementItemsAfter } from './movement-items.ts';
import type { Definition } from './ledger.ts';
import { readUnsettled } from './unsettled.ts';

export interface DifferenceItem {
  source: 'movement' | 'event';
  reason: 'superseded' | 'reversal_pair' | 'status_not_counted' | 'pending' | 'held' | 'quarantined' | 'rejected';
  external_id: string;
  event_id: string;
  occurred_at: string;
  received_at: string;
  status: string;
  type: string;
  // Signed as it nets in the totals (a reversal negative); as sent for an uncounted event.
  amount: { value: string; asset: string; scale: number };
  // The correction that superseded it, the movement a reversal takes back, or the reversal of a pair.
  related: string | null;
}

export interface ItemsPosition {
  source: 'movement' | 'event';
  at: string | null;
  id: string | null;
}

const UNSETTLED_ROWS_PER_READ = 500;

export async function differenceItems(
  pool: Pool,
  def: Definition,
  scale: number,
  after: ItemsPosition | null,
  limit: number,
): Promise<{ items: DifferenceItem[]; next: ItemsPosition | null }> {
  const items: DifferenceItem[] = [];
  let position = after ?? { source: 'movement', at: null, id: null };
  if (position.source === 'movement') {
    const rows = await movementItemsAfter(pool, def, { at: position.at, id: position.id }, limit + 1);
    for (const row of rows.slice(0, limit)) {
      items.push({
        source: 'movement',
        reason: row.reason,
        external_id: row.external_id,
        event_id: `${ID_PREFIXES.event}${row.event_id}`,
        occurred_at: row.occurred_at.toISOString(),
        received_at: row.received_at.toISOString(),
        status: row.status,
        type: row.type,
        amount: { value: row.value, asset: def.asset, scale },
        related: row.related,
      });
    }
    if (rows.length > limit) {
      const last = rows[limit - 1]!;
      return { items, next: { source: 'movement', at: last.at, id: last.event_id } };
    }
    position = { source: 'event', at: null, id: null };
  }
  // Unsettled events: read on until the page is full or the period is exhausted. A full page reads
  // on until one more item shows that a next page has something (never has_more, then nothing).
  let from = position.id ? { at: new Date(position.at!), id: position.id } : null;
  for (;;) {
    const room = limit - items.length;
    const { events, next } = await readUnsettled(pool, def, from, UNSETTLED_ROWS_PER_READ);
    if (room === 0) {
      if (events.length > 0) return { items, next: from ? { source: 'event', at: from.at.toISOString(), id: from.id } : { source: 'event', at: null, id: null } };
      if (!next) return { items, next: null };
      from = next;
      continue;
    }
    for (const event of events.slice(0, room)) {
      items.push({
        source: 'event',
        reason: event.reason,
        external_id: event.externalId,
        event_id: `${ID_PREFIXES.event}${event.eventId}`,
        occurred_at: event.occurredAt.toISOString(),
        received_at: event.receivedAt.toISOString(),
        status: event.status,
        type: event.type,
        amount: { value: event.value, asset: def.asset, scale },
        related: null,
      });
    }
    if (events.length > room) {
      // The page is full inside this read: go on after its last item.
      const last = events[room - 1]!;
      const at = def.basis === 'recorded' ? last.receivedAt : last.occurredAt;
      return { items, next: { source: 'event', at: at.toISOString(), id: last.eventId } };
    }
    if (!next) return { items, next: null };
    from = next;
  }
}

// RFC 4180: CRLF line ends; a field with a comma, quote, CR or LF is quoted, quotes doubled. A
// field that a spreadsheet would read as a formula is prefixed with an apostrophe; a negative
// amount is the one such field left as it is, and only when it is a number and nothing else
// (`-1+HYPERLINK(…)` starts like one, and is a formula).
export function csvLine(fields: string[]): string {
  return (
    fields
      .map((field) => {
        const safe = /^[=+\-@\t\r]/.test(field) && !/^-\d+$/.test(field) ? `'${field}` : field;
        return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
      })
      .join(',') + '\r\n'
  );
}

const CSV_HEADER = ['source', 'reason', 'external_id', 'event_id', 'occurred_at', 'received_at', 'status', 'type', 'amount_value', 'asset', 'scale', 'related'];

function csvRow(item: DifferenceItem): string {
  return csvLine([item.source, item.reason, item.external_id, item.event_id, item.occurred_at, item.received_at, item.status, item.type, item.amount.value, item.amount.asset, String(item.amount.scale), item.related ?? '']);
}

// The CSV export as a stream of text: the header row, then every item, a page read at a time as
// the client takes them.
export async function* csvItems(
  first: { items: DifferenceItem[]; next: ItemsPosition | null },
  readOn: (after: ItemsPosition) => Promise<{ items: DifferenceItem[]; next: ItemsPosition | null } | undefined>,
): AsyncGenerator<string> {
  yield csvLine(CSV_HEADER);
  let current: typeof first | undefined = first;
  while (current) {
    yield current.items.map(csvRow).join('');
    current = current.next ? await readOn(current.next) : undefined;
  }
}
