import type { PartitionLag } from '../../../platform/bus/port.ts';
import { openEngineProbes, type EngineHealth } from '../../../platform/engine-probes.ts';
import { openBus } from '../../../platform/engines.ts';
import { CONSUMER_GROUPS } from '../../../pipelines/groups.ts';
import { ParkedRecordStore } from '../../../platform/bus/parking/store.ts';
import { withContext } from '../context.ts';

// Where each pipeline stands: whether each engine answers, records not yet processed per consumer
// group, live members, events by status, and the webhook backlog. Exit code 1 when an engine does
// not answer, so a script can tell.
export async function statusCommand(print: (line: string) => void, json: boolean): Promise<void> {
  await withContext(async ({ config, db }) => {
    const probes = await openEngineProbes(config, { pool: db.pool, embedded: db.mode === 'embedded' });
    const engines = await probes.check().finally(() => probes.close());
    // Lag as the bus in use counts it (the outbox log, or the Kafka groups' committed offsets);
    // live members are the embedded log's (a Kafka group's members are the broker's to report).
    // With the bus's engine down the lag is unknown (null), not waited for through its driver's
    // retries.
    const busUp = engines.find((e) => e.engine === probes.busEngine)?.up !== false;
    const lags = new Map<string, PartitionLag[]>();
    if (busUp) {
      const bus = await openBus(config, db.pool, { relay: false });
      try {
        for (const { group, topics } of CONSUMER_GROUPS) lags.set(group, await bus.value.lag(group, topics));
      } finally {
        await bus.close();
      }
    }
    const parked = await new ParkedRecordStore(db.pool).openCounts();
    const groups = [];
    for (const { group } of CONSUMER_GROUPS) {
      const lag = lags.get(group);
      const { rows } = await db.pool.query<{ members: number }>(
        `SELECT count(*)::int AS members FROM consumer_members WHERE group_name = $1 AND seen_at > now() - interval '10 seconds'`,
        [group],
      );
      groups.push({ group, lag: lag ? lag.reduce((n, p) => n + p.records, 0) : null, members: rows[0]!.members, parked: parked.get(group) ?? 0, partitions: lag ?? [] });
    }
    const { rows: statuses } = await db.pool.query<{ status: string; events: number }>(
      'SELECT status, count(*)::int AS events FROM inbox_events GROUP BY status ORDER BY status',
    );
    // The webhook backlog: events not yet fanned out, deliveries waiting, deliveries given up on.
    const { rows: hooks } = await db.pool.query<{ outbox: number; pending: number; dead_lettered: number }>(
      `SELECT (SELECT count(*)::int FROM outgoing_events WHERE fanned_out_at IS NULL) AS outbox,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
              (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'dead_lettered') AS dead_lettered`,
    );
    const webhooks = hooks[0]!;
    if (engines.some((e) => !e.up)) process.exitCode = 1;
    if (json) return print(JSON.stringify({ engines, groups, events: Object.fromEntries(statuses.map((s) => [s.status, s.events])), webhooks }));
    print(`database: ${db.mode}`);
    for (const e of engines) print(engineLine(e));
    const unknownLag = `lag unknown (${probes.busEngine} does not answer)`;
    for (const g of groups) print(`group ${g.group}: ${g.lag === null ? unknownLag : `lag ${g.lag} records`}, ${g.members} live member(s), ${g.parked} parked record(s)${g.parked > 0 ? ' (svc deadletters list)' : ''}`);
    print(`events: ${statuses.map((s) => `${s.status} ${s.events}`).join(', ') || 'none'}`);
    print(`webhooks: ${webhooks.outbox} event(s) to fan out, ${webhooks.pending} delivery(ies) pending, ${webhooks.dead_lettered} dead-lettered`);
  });
}

function engineLine(e: EngineHealth): string {
  const where = `${e.variable} ${e.address}`;
  if (e.up) return `engine ${e.engine}: up (${where})`;
  return `engine ${e.engine}: DOWN (${where}): ${e.credentialsRefused ? `credentials refused (${e.credentialsRefused}): ` : ''}${e.reason}`;
}
