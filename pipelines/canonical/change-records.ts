import type { PoolClient } from '../../platform/postgres/pool.ts';
import { canonicalChangeTopic, changePartitionKey, type CanonicalChange } from '../../schemas/bus/canonical-change.ts';
import type { Family } from '../../schemas/families/index.ts';

// Appends canonical change records to the log in the transaction that wrote the canonical model,
// so a change is published exactly when it is committed. One statement per batch.
export async function writeChangeRecords(db: Pick<PoolClient, 'query'>, changes: CanonicalChange[], at: Date): Promise<void> {
  if (changes.length === 0) return;
  await db.query({
    name: 'change-records',
    text: `INSERT INTO outbox (tenant_id, event_id, topic, partition_key, created_at, payload)
           SELECT t, e, topic, k, $5::timestamptz, payload FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $6::text[]) AS u(t, e, topic, k, payload)`,
    values: [
      changes.map((c) => c.tenant_id),
      changes.map((c) => c.event_id),
      changes.map((c) => canonicalChangeTopic(c.object as Family)),
      changes.map(changePartitionKey),
      at,
      changes.map((c) => JSON.stringify(c)),
    ],
  });
}
