import { readJsonFile } from '../files.ts';
import { parseArgs } from 'node:util';
import { findReportingEntity, putReportingEntity, reportingEntitySchema } from '../../console/case-exports/reporting-entity.ts';
import { requireTenant, UsageError, withContext } from '../context.ts';

const USAGE = `usage: svc goaml set --tenant <tenant_id> --file <reporting-entity.json>
       svc goaml show --tenant <tenant_id>`;

// The tenant's goAML reporting entity, which the console's goAML export needs
// (docs/decisions/0032-goaml-export.md): set from a JSON file (replacing what was set), shown as JSON.
export async function goamlCommand(args: string[], print: (line: string) => void): Promise<void> {
  const { positionals, values } = parseArgs({ args, allowPositionals: true, options: { tenant: { type: 'string' }, file: { type: 'string' } } });
  const [action] = positionals;
  const tenantId = values.tenant;
  if (positionals.length !== 1 || !tenantId || (action === 'set') !== (values.file !== undefined) || (action !== 'set' && action !== 'show')) throw new UsageError(USAGE);

  let parsed: ReturnType<typeof reportingEntitySchema.parse> | undefined;
  if (action === 'set') {
    const json = await readJsonFile(values.file!);
    const checked = reportingEntitySchema.safeParse(json);
    if (!checked.success) {
      throw new UsageError(`${values.file} refused:\n${checked.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n')}`);
    }
    parsed = checked.data;
  }
  await withContext(async (context) => {
    const { db } = context;
    await requireTenant(context, tenantId);
    if (parsed) {
      const outcome = await putReportingEntity(db.pool, tenantId, parsed, new Date());
      if (outcome.kind === 'unknown_tenant') throw new UsageError(`no tenant ${tenantId}`);
    }
    const entity = await findReportingEntity(db.pool, tenantId);
    if (!entity) throw new UsageError(`tenant ${tenantId} has no goAML reporting entity: svc goaml set --tenant ${tenantId} --file <reporting-entity.json>`);
    print(JSON.stringify(entity, null, 2));
  });
}
