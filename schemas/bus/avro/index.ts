// The Avro value schema of every bus topic, derived (derive.ts) from the zod schemas:
//
//   inbox.<family>      the family's envelope (schemas/envelope.ts ENVELOPES), which is what an
//                       inbox record's value holds: the accepted event's JSON as sent (the outbox
//                       row points at inbox_events.raw_event). Tenant and event id travel as
//                       headers, as on the embedded log.
//   canonical.<family>  the change record (change-records.ts, checked against the interfaces of
//                       schemas/bus/canonical-change.ts): EntityChange for party, account,
//                       instrument and relationship, MovementChange, ControlEventChange.
//
// Record full names are svc.<stream>.<family>.<Record>; nested records are named after their path.

import type { z } from 'zod';
import { ENVELOPES } from '../../envelope.ts';
import { FAMILY_NAMES, isFamily, type Family } from '../../families/index.ts';
import { CANONICAL_CHANGE_TOPIC_PREFIX } from '../canonical-change.ts';
import { controlEventChangeSchema, entityChangeSchema, movementChangeSchema } from './change-records.ts';
import { deriveAvro, type DerivedAvro } from './derive.ts';

const INBOX_TOPIC_PREFIX = 'inbox.';

function changeSchemaOf(family: Family): { schema: z.ZodType; name: string } {
  switch (family) {
    case 'movement':
      return { schema: movementChangeSchema, name: 'MovementChange' };
    case 'control_event':
      return { schema: controlEventChangeSchema, name: 'ControlEventChange' };
    default:
      return { schema: entityChangeSchema, name: 'EntityChange' };
  }
}

const cache = new Map<string, DerivedAvro>();

// The derived value schema of a bus topic; throws for a topic the bus does not carry.
export function topicValueSchema(topic: string): DerivedAvro {
  const cached = cache.get(topic);
  if (cached) return cached;
  let derived: DerivedAvro;
  if (topic.startsWith(INBOX_TOPIC_PREFIX) && isFamily(topic.slice(INBOX_TOPIC_PREFIX.length))) {
    const family = topic.slice(INBOX_TOPIC_PREFIX.length) as Family;
    derived = deriveAvro(ENVELOPES[family], {
      name: 'Envelope',
      namespace: `svc.inbox.${family}`,
      doc: `An accepted ${family} event as sent to the API (the envelope of schemas/envelope.ts).`,
    });
  } else if (topic.startsWith(CANONICAL_CHANGE_TOPIC_PREFIX) && isFamily(topic.slice(CANONICAL_CHANGE_TOPIC_PREFIX.length))) {
    const family = topic.slice(CANONICAL_CHANGE_TOPIC_PREFIX.length) as Family;
    const { schema, name } = changeSchemaOf(family);
    derived = deriveAvro(schema, {
      name,
      namespace: `svc.canonical.${family}`,
      doc: `A canonical change record of a ${family} (schemas/bus/canonical-change.ts); data is JSON.`,
    });
  } else {
    throw new Error(`no Avro schema for topic ${topic}`);
  }
  cache.set(topic, derived);
  return derived;
}

// Every topic the bus carries, inbox first.
export const BUS_TOPICS: string[] = [
  ...FAMILY_NAMES.map((family) => `${INBOX_TOPIC_PREFIX}${family}`),
  ...FAMILY_NAMES.map((family) => `${CANONICAL_CHANGE_TOPIC_PREFIX}${family}`),
];

export { AvroMappingError,  type DerivedAvro } from './derive.ts';
