import type { AcceptOutcome, PreparedEvent } from '../../../platform/inbox/accept-events.ts';
import { ID_PREFIXES, uuidv7 } from '../../../platform/ids.ts';
import { contentHash } from '../../../platform/json/canonical-json.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';
import { FAMILIES } from '../../../schemas/families/index.ts';
import type { IngestReceipt } from '../../../schemas/responses.ts';
import type { FieldError } from '../../../schemas/problem.ts';
import { dottedPath, validateItem, type ValidationContext } from '../../../schemas/validation/validate-item.ts';


export interface IncomingItem {
  // The item as parsed: {object, event}.
  value: unknown;
  // The exact bytes of its event as received (undefined when the item has no event to store).
  rawEvent: Buffer | undefined;
  // Where the item sits in the request body (["events", "3"] in a batch, [] otherwise).
  prefix: string[];
  // Refused before validation (past the JSON bounds, or a member name repeated): its one finding.
  refusal?: FieldError;
}

export type ItemResult =
  // Committed now, or the same content committed before (replay: the original event).
  | { kind: 'accepted'; receipt: IngestReceipt }
  // Failed validation: a 400-class problem with these findings.
  | { kind: 'invalid'; code: ErrorCode; errors: FieldError[] }
  // The dedup key holds different content: 409 svc:sequence/conflict.
  | { kind: 'conflict'; errors: FieldError[] };

export interface IngestContext {
  tenantId: string;
  receivedAt: Date;
  correlationId: string | null;
  validation: ValidationContext;
}

// Validates every item, commits the valid ones together through `accept`, and says what became
// of each item, in order.
export async function ingestItems(
  items: IncomingItem[],
  context: IngestContext,
  accept: (events: PreparedEvent[]) => Promise<AcceptOutcome[]>,
): Promise<ItemResult[]> {
  const prepared = prepareItems(items, context);
  return settleItems(items, prepared, await accept(prepared.events));
}

// The items validated: the findings of the invalid ones, and the events of the valid ones.
export interface PreparedItems {
  results: (ItemResult | undefined)[];
  // The item each event came from.
  indexes: number[];
  events: PreparedEvent[];
}

export function prepareItems(items: IncomingItem[], context: IngestContext): PreparedItems {
  const results: (ItemResult | undefined)[] = new Array(items.length);
  const indexes: number[] = [];
  const events: PreparedEvent[] = [];
  items.forEach((item, index) => {
    if (item.refusal) {
      results[index] = { kind: 'invalid', code: 'svc:validation/schema', errors: [item.refusal] };
      return;
    }
    const validation = validateItem(item.value, context.validation, item.prefix);
    if (!validation.ok) {
      results[index] = { kind: 'invalid', code: validation.code, errors: validation.errors };
      return;
    }
    const event = validation.event;
    const raw = (item.value as { event: unknown }).event;
    indexes.push(index);
    events.push({
      tenantId: context.tenantId,
      eventId: uuidv7(context.receivedAt.getTime()),
      object: validation.object,
      externalId: event.external_id,
      sequence: event.sequence ?? null,
      rawEvent: item.rawEvent ?? Buffer.from(JSON.stringify(raw), 'utf8'),
      contentHash: contentHash(raw),
      occurredAt: validation.occurredAt,
      receivedAt: context.receivedAt,
      correlationId: context.correlationId,
      importId: null,
      historical: false,
    });
  });
  return { results, indexes, events };
}

// What became of each item, given the commit's outcome for each prepared event.
export function settleItems(items: IncomingItem[], prepared: PreparedItems, outcomes: AcceptOutcome[]): ItemResult[] {
  const results = [...prepared.results];
  prepared.events.forEach((event, i) => {
    const index = prepared.indexes[i]!;
    const outcome = outcomes[i]!;
    if (outcome.kind === 'conflict') {
      const entity = FAMILIES[event.object].kind === 'entity';
      const field = entity ? 'sequence' : 'external_id';
      results[index] = {
        kind: 'conflict',
        errors: [
          {
            path: dottedPath([...items[index]!.prefix, 'event', field]),
            code: 'svc:sequence/conflict',
            message: entity
              ? 'this entity version was already received with different content; send a new sequence'
              : 'this fact was already received with different content; correct it with a new event (links.correction_of)',
          },
        ],
      };
      return;
    }
    results[index] = {
      kind: 'accepted',
      receipt: {
        event_id: ID_PREFIXES.event + outcome.eventId,
        object: event.object,
        external_id: event.externalId,
        received_at: outcome.receivedAt.toISOString(),
        idempotent_replay: outcome.kind === 'duplicate',
      },
    };
  });
  return results as ItemResult[];
}
