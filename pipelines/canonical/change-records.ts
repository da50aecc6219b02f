import type { PoolClient } from '../../platform/postgres/pool.ts';
import { canonicalChangeTopic, changePartitionKey, type CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import type { Family } from '../../schemas/families/index.ts';

// Appends canonical change records to the log in the transaction that wrote the canonical model,
// so a change is published exactly when it is committed. One statement per batch, from one JSON
// document: as a text[] parameter every payload's quotes would be escaped element by element in
// JavaScript; as json each record's payload is cut out of the document as it was written. Read
// with json_to_recordset, which parses each element once: `r->>'field'` on a json element parses
// the whole element (its payload included) again for every field.
export async function writeChangeRecords(db: Pick<PoolClient, 'query'>, changes: CanonicalChange[], at: Date): Promise<void> {
  if (changes.length === 0) return;
  await db.query({
    name: 'change-records',
    text: `INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload)
           SELECT r.t, r.e, r.topic, r.k, $2::timestamptz, r.p::text
             FROM json_to_recordset($1::json) AS r(t text, e uuid, topic text, k text, p json)`,
    values: [
      JSON.stringify(changes.map((c) => ({ t: c.tenant_id, e: c.event_id, topic: canonicalChangeTopic(c.object as Family), k: changePartitionKey(c), p: c }))),
      at,
    ],
  });
}
