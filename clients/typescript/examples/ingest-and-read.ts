// Sending facts and reading them back.
//   SVC_BASE_URL=https://… SVC_INGEST_KEY_ID=… SVC_INGEST_KEY_SECRET=… SVC_READ_KEY_ID=… SVC_READ_KEY_SECRET=… \
//     npx tsx examples/ingest-and-read.ts
import { pathToFileURL } from 'node:url';
import { SvcApiError, SvcClient, type BatchItem, type PartyEvent } from '../src/index.ts'; // in your project: '@svc-controlplane/client'

const SCHEMA_VERSION = '2026-09-01';

export async function ingestAndRead(ingest: SvcClient, read: SvcClient, now = new Date()): Promise<{ accepted: number; movements: number }> {
  const at = now.toISOString();
  const party: PartyEvent = {
    external_id: 'cust-1001',
    schema_version: SCHEMA_VERSION,
    occurred_at: at,
    sequence: 1,
    data: { type: 'person', status: 'active', created_at: at, legal_names: ['Ada Example'] },
  };
  // One event: the SDK adds an Idempotency-Key, so a retried call never lands twice.
  const receipt = await ingest.parties.ingest(party);
  console.log(`party ${receipt.external_id}: ${receipt.event_id} (replayed: ${receipt.idempotent_replay})`);

  // Many events in one request: accepted atomically, validated per item; check each outcome.
  const events: BatchItem[] = [
    { object: 'account', event: { external_id: 'acc-1001', schema_version: SCHEMA_VERSION, occurred_at: at, sequence: 1, data: { holder_party_id: 'cust-1001', type: 'wallet', status: 'active', asset: 'USD', opened_at: at } } },
    ...[1, 2, 3].map(
      (n): BatchItem => ({
        object: 'movement',
        event: {
          external_id: `mv-1001-${n}`,
          schema_version: SCHEMA_VERSION,
          occurred_at: at,
          data: { type: 'p2p', status: 'completed', amount: { value: String(n * 10_000), asset: 'USD', scale: 2 }, debit: { account_id: 'acc-1001', party_id: 'cust-1001' }, credit: { counterparty: { name_as_given: 'Grocer', country: 'GB' } } },
        },
      }),
    ),
  ];
  const batch = await ingest.batches.create({ events });
  for (const result of batch.results) if (result.outcome === 'rejected') console.warn(`item ${result.index} rejected:`, result.problem?.code, result.problem?.errors);

  // Reads: a governed 404 until the canonical pipeline has taken the party in.
  try {
    const view = await read.parties.retrieve('cust-1001');
    console.log(`party read back at ${view.occurred_at}`);
  } catch (error) {
    if (!(error instanceof SvcApiError) || error.status !== 404) throw error;
    console.log(`not canonical yet: ${error.code}`);
  }

  // Every movement of the party, newest first, page after page.
  let movements = 0;
  try {
    for await (const movement of read.parties.movements('cust-1001', { direction: 'both', limit: 100 })) {
      movements++;
      console.log(movement.external_id, movement.occurred_at);
    }
  } catch (error) {
    if (!(error instanceof SvcApiError) || error.status !== 404) throw error;
  }
  return { accepted: batch.accepted + 1, movements };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const client = (scope: 'INGEST' | 'READ') =>
    new SvcClient({ baseUrl: process.env.SVC_BASE_URL!, keyId: process.env[`SVC_${scope}_KEY_ID`]!, secret: process.env[`SVC_${scope}_KEY_SECRET`]! });
  await ingestAndRead(client('INGEST'), client('READ'));
}
