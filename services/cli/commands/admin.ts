import { parseArgs } from 'node:util';
import { registerAsset } from '../../../platform/assets/tenant-registry.ts';
import { SecretBox } from '../../../platform/crypto/secret-box.ts';
import { issueKey, revokeKey, SCOPES, type Scope } from '../../../platform/keys/api-keys.ts';
import { migrate } from '../../../platform/postgres/migrate.ts';
import { setTenantRateLimit } from '../../../platform/rate-limit/token-buckets.ts';
import { createTenant } from '../../../platform/tenants/tenants.ts';
import { MAX_SCALE } from '../../../schemas/primitives/money.ts';
import { NON_ISO_ASSET } from '../../../schemas/assets/registry.ts';
import { UsageError, withContext } from '../context.ts';

type Print = (line: string) => void;

export async function migrateCommand(print: Print): Promise<void> {
  // openContext already applied every pending migration; report where the schema stands.
  await withContext(async ({ db }) => {
    const applied = await migrate(db.pool);
    const { rows } = await db.pool.query<{ version: number }>('SELECT max(version) AS version FROM schema_migrations');
    print(`migrations applied; schema at version ${rows[0]?.version ?? 0}${applied.length ? ` (${applied.join(', ')} just now)` : ''}`);
  });
}

const TENANTS_USAGE = `usage: svc tenants create <tenant_id> --base-asset <ASSET>
       svc tenants set-rate-limit <tenant_id> --capacity <events, at least 1000> --refill-per-s <events>`;

export async function tenantsCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'base-asset': { type: 'string' }, capacity: { type: 'string' }, 'refill-per-s': { type: 'string' } },
  });
  const [action, tenantId] = positionals;
  if (action === 'set-rate-limit' && tenantId) {
    const capacity = Number(values.capacity);
    const refillPerS = Number(values['refill-per-s']);
    // At least one full batch must fit in the bucket, or a 1000-event batch could never pass.
    if (!Number.isInteger(capacity) || capacity < 1000 || !(refillPerS > 0)) throw new UsageError(TENANTS_USAGE);
    return withContext(async ({ db }) => {
      if (!(await setTenantRateLimit(db.pool, tenantId, { capacity, refillPerS }))) throw new UsageError(`no tenant ${tenantId}`);
      print(`tenant ${tenantId}: bucket of ${capacity} events, refilled at ${refillPerS} events/s (API processes pick it up within 30 s)`);
    });
  }
  if (action !== 'create' || !tenantId || !values['base-asset']) throw new UsageError(TENANTS_USAGE);
  await withContext(async ({ db }) => {
    const outcome = await createTenant(db.pool, tenantId, values['base-asset']!);
    switch (outcome.kind) {
      case 'created':
        return print(`tenant ${tenantId} created with base asset ${values['base-asset']}`);
      case 'exists':
        throw new UsageError(`tenant ${tenantId} already exists`);
      case 'invalid':
        throw new UsageError(outcome.message);
    }
  });
}

export async function keysCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      scope: { type: 'string' },
      live: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, keyId] = positionals;
  if (action === 'revoke' && keyId) {
    return withContext(async ({ db }) => {
      if (!(await revokeKey(db.pool, keyId, new Date()))) throw new UsageError(`no active key ${keyId}`);
      print(`key ${keyId} revoked`);
    });
  }
  const scope = values.scope as Scope | undefined;
  if (action !== 'issue' || !values.tenant || !scope || !SCOPES.includes(scope)) {
    throw new UsageError(
      `usage: svc keys issue --tenant <tenant_id> --scope <${SCOPES.join('|')}> [--live] [--json]\n       svc keys revoke <key_id>`,
    );
  }
  await withContext(async ({ db, masterKey }) => {
    const outcome = await issueKey(db.pool, new SecretBox(masterKey), {
      tenantId: values.tenant!,
      scopes: [scope],
      environment: values.live ? 'live' : 'test',
    });
    if (outcome.kind === 'unknown_tenant') throw new UsageError(`no tenant ${values.tenant}`);
    const key = outcome.key;
    if (values.json) return print(JSON.stringify(key));
    print(`tenant_id:   ${key.tenant_id}\nkey_id:      ${key.key_id}\nsecret:      ${key.secret}\nscopes:      ${key.scopes.join(',')}\nenvironment: ${key.environment}\nThe secret is shown once and cannot be recovered.`);
  });
}

export async function assetsCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, scale: { type: 'string' } },
  });
  const [action, asset] = positionals;
  const scale = Number(values.scale);
  if (action !== 'add' || !asset || !values.tenant || !Number.isInteger(scale)) {
    throw new UsageError('usage: svc assets add <X-ASSET> --tenant <tenant_id> --scale <0-18>');
  }
  if (!NON_ISO_ASSET.test(asset)) throw new UsageError('only non-ISO assets (X- followed by 2-10 upper-case letters or digits) can be registered');
  if (scale < 0 || scale > MAX_SCALE) throw new UsageError(`scale must be 0-${MAX_SCALE}`);
  await withContext(async ({ db }) => {
    const outcome = await registerAsset(db.pool, values.tenant!, asset, scale);
    switch (outcome.kind) {
      case 'registered':
        return print(`asset ${asset} registered for ${values.tenant} with scale ${scale}`);
      case 'unknown_tenant':
        throw new UsageError(`no tenant ${values.tenant}`);
      case 'conflict':
        throw new UsageError(`asset ${asset} is already registered for ${values.tenant} with scale ${outcome.scale}`);
    }
  });
}
