import type { PartitionLag } from '../../../platform/bus/port.ts';
import { openEngineProbes, type EngineHealth } from '../../../platform/engine-probes.ts';
import { openBus } from '../../../platform/engines.ts';
import { describeFailure } from '../../../platform/failure-description.ts';
import { CONSUMER_GROUPS } from '../../../pipelines/groups.ts';
import { ParkedRecordStore } from '../../../platform/bus/parking/store.ts';
import { inboxStatusCounts } from '../../../platform/inbox/status-counts.ts';
import { webhookBacklog } from '../../webhooks/backlog.ts';
import { withContext } from '../context.ts';

// Where each pipeline stands: whether each engine answers, records not yet processed per consumer
// group, live members, events by status, and the webhook backlog. Exit code 1 when an engine does
// not answer or the lag cannot be read, so a script can tell.
export async function statusCommand(print: (line: string) => void, json: boolean): Promise<void> {
  await withContext(async ({ config, db }) => {
    const probes = await openEngineProbes(config, { pool: db.pool, embedded: db.mode === 'embedded' });
    const engines = await probes.check().finally(() => probes.close());
    // Lag and live members as the bus in use counts them (the outbox log and its member table, or
    // the broker's committed offsets and group members). With the bus's engine down both are
    // unknown (null), not waited for through its driver's retries. An engine that answers its probe
    // but not yet these questions (a broker just restarted, still electing leaders and loading its
    // group coordinators) leaves them unknown too, with its answer as the reason: status reports
    // what it could not learn rather than failing without a report.
    const busUp = engines.find((e) => e.engine === probes.busEngine)?.up !== false;
    const lags = new Map<string, PartitionLag[]>();
    const members = new Map<string, number>();
    let unknownBecause: string | null = busUp ? null : `${probes.busEngine} does not answer`;
    if (busUp) {
      const bus = await openBus(config, db.pool, { relay: false });
      try {
        for (const { group, topics } of CONSUMER_GROUPS) {
          lags.set(group, await bus.value.lag(group, topics));
          members.set(group, await bus.value.members(group));
        }
      } catch (error) {
        lags.clear();
        members.clear();
        unknownBecause = `${probes.busEngine}: ${describeFailure(error)}`;
      } finally {
        await bus.close();
      }
    }
    const parked = await new ParkedRecordStore(db.pool).openCounts();
    const groups = CONSUMER_GROUPS.map(({ group }) => {
      const lag = lags.get(group);
      return {
        group,
        lag: lag ? lag.reduce((n, p) => n + p.records, 0) : null,
        lag_unknown_reason: lag ? null : unknownBecause,
        members: members.get(group) ?? null,
        parked: parked.get(group) ?? 0,
        partitions: lag ?? [],
      };
    });
    const events = await inboxStatusCounts(db.pool);
    const webhooks = await webhookBacklog(db.pool);
    if (engines.some((e) => !e.up) || unknownBecause !== null) process.exitCode = 1;
    if (json) return print(JSON.stringify({ engines, groups, events, webhooks }));
    print(`database: ${db.mode}`);
    for (const e of engines) print(engineLine(e));
    for (const g of groups) print(`group ${g.group}: ${g.lag === null ? `lag unknown (${g.lag_unknown_reason})` : `lag ${g.lag} records, ${g.members} live member(s)`}, ${g.parked} parked record(s)${g.parked > 0 ? ' (svc deadletters list)' : ''}`);
    print(`events: ${Object.entries(events).map(([status, count]) => `${status} ${count}`).join(', ') || 'none'}`);
    print(`webhooks: ${webhooks.outbox} event(s) to fan out, ${webhooks.pending} delivery(ies) pending, ${webhooks.dead_lettered} dead-lettered`);
  });
}

function engineLine(e: EngineHealth): string {
  const where = `${e.variable} ${e.address}`;
  if (e.up) return `engine ${e.engine}: up (${where})`;
  return `engine ${e.engine}: DOWN (${where}): ${e.credentialsRefused ? `credentials refused (${e.credentialsRefused}): ` : ''}${e.reason}`;
}
