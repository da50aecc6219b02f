// An effect applied once per record however often the bus delivers it, made idempotent the way the
// pipelines make theirs (the graph claims each event id in graph_applied, ON CONFLICT DO NOTHING,
// and writes only what it claimed, in the same transaction). For the Kafka fault tests
// (platform/bus/kafka/faults.test.ts), which judge "applied twice" on these tables:
//
//   fault_deliveries  every delivery of a record to a member, no key: at-least-once redelivery
//                     is allowed and shows here
//   fault_claims      one row per event id (primary key): whoever inserts it applies the record
//   fault_effects     the effect, written only for the records this transaction claimed; no key
//                     of its own, so a record whose effect was written twice is two rows, and the
//                     identity column keeps the order the effects were applied in
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { BusRecord } from '../../platform/bus/port.ts';

export async function createAppliedOnceTables(pool: Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE fault_deliveries (member text NOT NULL, event_id uuid NOT NULL, kafka_partition int NOT NULL, kafka_offset bigint NOT NULL);
    CREATE TABLE fault_claims (event_id uuid PRIMARY KEY, member text NOT NULL);
    CREATE TABLE fault_effects (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL, member text NOT NULL, record_key text NOT NULL, seq int NOT NULL,
      kafka_partition int NOT NULL, kafka_offset bigint NOT NULL
    )`);
}

// Applies the records not applied before, in their order, in one transaction; returns how many.
export async function applyOnce(pool: Pool, member: string, records: BusRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const rows = records.map((record) => ({ event: record.headers.event_id!, key: record.key, seq: seqOf(record), partition: record.partition, offset: record.offset }));
  return withTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO fault_deliveries (member, event_id, kafka_partition, kafka_offset)
       SELECT $1, e, p, o FROM unnest($2::uuid[], $3::int[], $4::bigint[]) AS u(e, p, o)`,
      [member, rows.map((r) => r.event), rows.map((r) => r.partition), rows.map((r) => r.offset)],
    );
    // Claimed in event id order, as graph_applied is: two members claiming overlapping records at
    // once (a member and the zombie it replaced) lock them in one order and cannot deadlock.
    const { rows: claimed } = await client.query<{ event_id: string }>(
      `INSERT INTO fault_claims (event_id, member) SELECT e, $1 FROM unnest($2::uuid[]) AS u(e) ORDER BY e
       ON CONFLICT DO NOTHING RETURNING event_id`,
      [member, rows.map((r) => r.event)],
    );
    const mine = new Set(claimed.map((row) => row.event_id));
    const apply = rows.filter((r) => mine.has(r.event));
    if (apply.length > 0) {
      await client.query(
        `INSERT INTO fault_effects (event_id, member, record_key, seq, kafka_partition, kafka_offset)
         SELECT e, $1, k, s, p, o FROM unnest($2::uuid[], $3::text[], $4::int[], $5::int[], $6::bigint[]) WITH ORDINALITY AS u(e, k, s, p, o, n) ORDER BY n`,
        [member, apply.map((r) => r.event), apply.map((r) => r.key), apply.map((r) => r.seq), apply.map((r) => r.partition), apply.map((r) => r.offset)],
      );
    }
    return apply.length;
  });
}

// The version writeRecords (platform/bus/contract.test-kit.ts) puts in a record's data. Read here rather than
// imported: contract.ts loads vitest, and this module also runs in a member process of its own.
function seqOf(record: BusRecord): number {
  return (JSON.parse(record.value.toString('utf8')) as { data: { seq: number } }).data.seq;
}
