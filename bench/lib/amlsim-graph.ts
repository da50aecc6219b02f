import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { graphChangeOf } from '../../pipelines/graph/changes.ts';
import type { GraphChange } from '../../platform/graph/port.ts';
import type { EntityChange, MovementChange } from '../../schemas/bus/canonical-change.ts';
import type { movementDataSchema } from '../../schemas/families/movement.ts';
import { accountItem, accountKey, movementItem, partyItem, partyKey, type Dataset, type Transaction } from './amlsim.ts';

// An AMLSim data set as the graph pipeline's input, for a bench that loads a GraphStore through
// apply() without the API and the canonical pipeline: each batch item of amlsim.ts (the events
// bench/graph.ts sends) becomes the canonical change record the canonical pipeline would publish
// for it, and pipelines/graph's own graphChangeOf turns that into the GraphChange the graph
// pipeline would apply. So the stores hold the network bench/graph builds, by the same mapping.

// The tenant's base asset is the data set's (USD): every movement is priced at its own amount.
const BASE_ASSET = 'USD';

interface ItemEvent<Data = Record<string, unknown>> {
  external_id: string;
  occurred_at: string;
  sequence?: number;
  data: Data;
}

// An item of amlsim.ts, which builds valid events of its family.
const eventOf = <Data = Record<string, unknown>>(item: string): ItemEvent<Data> => (JSON.parse(item) as { event: ItemEvent<Data> }).event;

// What every change record carries about its event.
const envelopeOf = (tenantId: string, event: ItemEvent, receivedAt: string) => ({
  tenant_id: tenantId,
  event_id: randomUUID(),
  external_id: event.external_id,
  occurred_at: event.occurred_at,
  received_at: receivedAt,
});

function entityChange(tenantId: string, object: 'party' | 'account', item: string, receivedAt: string): EntityChange {
  const event = eventOf(item);
  return {
    ...envelopeOf(tenantId, event, receivedAt),
    object,
    sequence: event.sequence ?? null,
    // One version per entity: each is its entity's current one.
    current: true,
    data: event.data,
  };
}

function movementChange(tenantId: string, t: Transaction, receivedAt: string): MovementChange {
  const event = eventOf<z.input<typeof movementDataSchema>>(movementItem(t));
  const amount = event.data.amount;
  return {
    ...envelopeOf(tenantId, event, receivedAt),
    object: 'movement',
    type: event.data.type,
    status: event.data.status,
    amount,
    base_amount: amount.asset === BASE_ASSET ? amount : null,
    // The leg's party is its account's holder (node N's party holds node N's account).
    debit: { account_id: accountKey(t.source), party_id: partyKey(t.source), country: null },
    credit: { account_id: accountKey(t.target), party_id: partyKey(t.target), country: null },
    data: event.data,
  };
}

// The entities (every party, then every account, as bench/graph ingests them before the
// movements) and the movements in the data set's time order. Event ids are fresh per call: give
// every store the same arrays.
export function amlsimGraphChanges(dataset: Dataset, tenantId: string): { entities: GraphChange[]; movements: GraphChange[] } {
  const receivedAt = new Date().toISOString();
  return {
    entities: [
      ...dataset.nodes.map((node) => graphChangeOf(entityChange(tenantId, 'party', partyItem(node), receivedAt))),
      ...dataset.nodes.map((node) => graphChangeOf(entityChange(tenantId, 'account', accountItem(node), receivedAt))),
    ],
    movements: dataset.transactions.map((t) => graphChangeOf(movementChange(tenantId, t, receivedAt))),
  };
}
