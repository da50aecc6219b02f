import { parseArgs } from 'node:util';
import { ID_PREFIXES } from '../../../platform/ids.ts';
import { PARKED_STATUSES, ParkedRecordStore, type ParkedFilter, type ParkedRecord, type ParkedStatus } from '../../../platform/bus/parking/store.ts';
import { requireTenant, UsageError, withContext } from '../context.ts';

const USAGE = `usage: svc deadletters list [--group <group>] [--tenant <tenant_id>] [--status <${PARKED_STATUSES.join('|')}>] [--limit <n>] [--json]
       svc deadletters replay (--id <id> ... | --group <group> [--tenant <tenant_id>] | --all) [--json]
       svc deadletters discard (--id <id> ... | --group <group> [--tenant <tenant_id>] | --all) [--json]`;

// Records a consumer group parked (platform/bus/parking): list them, ask the group's running
// members to hand them to its handler again once the cause is fixed, or give up on them. A replay
// is carried out by the group's processes (`svc up` or `svc run pipeline <group>`); a record that
// fails again is parked again with the new error. Replay and discard need a selection: --all is
// never implied.
export async function deadlettersCommand(args: string[], print: (line: string) => void): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      group: { type: 'string' },
      tenant: { type: 'string' },
      status: { type: 'string' },
      id: { type: 'string', multiple: true },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const [action] = positionals;
  if (positionals.length !== 1 || (action !== 'list' && action !== 'replay' && action !== 'discard')) throw new UsageError(USAGE);
  const filter: ParkedFilter = {
    ...(values.group ? { group: values.group } : {}),
    ...(values.tenant ? { tenantId: values.tenant } : {}),
    ...(values.id ? { ids: values.id.map(parseRecordId) } : {}),
  };
  if (action === 'list') {
    if (values.status !== undefined && !PARKED_STATUSES.includes(values.status as ParkedStatus)) throw new UsageError(`--status must be one of ${PARKED_STATUSES.join(', ')}`);
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be an integer from 1 to 10000');
    await withContext(async (context) => {
      if (values.tenant !== undefined) await requireTenant(context, values.tenant);
      const records = await new ParkedRecordStore(context.db.pool).list({ ...filter, statuses: [(values.status as ParkedStatus | undefined) ?? 'parked'], limit });
      if (values.json) return print(JSON.stringify(records.map(view)));
      if (records.length === 0) return print('no parked records');
      for (const record of records) print(line(record));
    });
    return;
  }
  if (values.status !== undefined || values.limit !== undefined) throw new UsageError(USAGE);
  const selected = Boolean(values.id?.length || values.group || values.all);
  if (!selected || (values.all && (values.id?.length || values.group || values.tenant))) throw new UsageError(USAGE);
  await withContext(async ({ db }) => {
    const store = new ParkedRecordStore(db.pool);
    const moved = action === 'replay' ? await store.requestReplay(filter) : await store.discard(filter);
    if (values.json) return print(JSON.stringify(moved.map(view)));
    const verb = action === 'replay' ? 'asked the group to replay' : 'discarded';
    print(`${verb} ${moved.length} record(s)${moved.length > 0 ? `: ${moved.map((r) => r.id).join(', ')}` : ''}`);
  });
}

function parseRecordId(text: string): string {
  if (!/^[1-9][0-9]{0,17}$/.test(text)) throw new UsageError(`--id ${text} is not a parked record id (a positive integer)`);
  return text;
}

const view = (record: ParkedRecord) => ({
  id: record.id,
  tenant_id: record.tenantId,
  group: record.group,
  topic: record.topic,
  partition: record.partition,
  offset: record.offset,
  event_id: record.eventId === null ? null : `${ID_PREFIXES.event}${record.eventId}`,
  key: record.key,
  error: record.error,
  attempts: record.attempts,
  status: record.status,
  parked_at: record.parkedAt.toISOString(),
  updated_at: record.updatedAt.toISOString(),
});

function line(record: ParkedRecord): string {
  const event = record.eventId ? ` ${ID_PREFIXES.event}${record.eventId}` : '';
  return `#${record.id} ${record.group} ${record.tenantId}${event} ${record.topic}[${record.partition}]@${record.offset} ${record.status} after ${record.attempts} attempt(s), ${record.parkedAt.toISOString()}: ${record.error}`;
}
