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

// Positionals past those a command takes are refused, never ignored: `svc keys revoke k1 k2`
// revoking k1 alone, and saying nothing of k2, left a leaked key valid.
function exactly(positionals: string[], count: number, usage: string): string[] {
  if (positionals.length !== count) throw new UsageError(usage);
  return positionals;
}

// A number flag as written: digits (and a fraction where allowed), nothing else. Number() takes
// '' and ' ' as 0, and '0x6', '1e1' and 'Infinity' as numbers.
function numberFlag(text: string | undefined, fraction = false): number {
  return text !== undefined && (fraction ? /^\d+(\.\d+)?$/ : /^\d+$/).test(text) ? Number(text) : NaN;
}

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
// A bucket's capacity and refill at most (the database keeps them as 32-bit integers and reals).
const MAX_BUCKET = 2_000_000_000;

export async function tenantsCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'base-asset': { type: 'string' }, capacity: { type: 'string' }, 'refill-per-s': { type: 'string' } },
  });
  const [action, tenantId] = exactly(positionals, 2, TENANTS_USAGE);
  if (action === 'set-rate-limit' && tenantId) {
    const capacity = numberFlag(values.capacity);
    const refillPerS = numberFlag(values['refill-per-s'], true);
    // At least one full batch must fit in the bucket, or a 1000-event batch could never pass.
    if (!Number.isSafeInteger(capacity) || capacity < 1000 || capacity > MAX_BUCKET || !(refillPerS > 0) || refillPerS > MAX_BUCKET) throw new UsageError(TENANTS_USAGE);
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
      // Repeatable only to be refused by name: one scope per key.
      scope: { type: 'string', multiple: true },
      live: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const usage = `usage: svc keys issue --tenant <tenant_id> --scope <${SCOPES.join('|')}> [--live] [--json]\n       svc keys revoke <key_id>`;
  const [action, keyId] = exactly(positionals, positionals[0] === 'revoke' ? 2 : 1, usage);
  if (action === 'revoke' && keyId) {
    return withContext(async ({ db }) => {
      if (!(await revokeKey(db.pool, keyId, new Date()))) throw new UsageError(`no active key ${keyId}`);
      print(`key ${keyId} revoked`);
    });
  }
  const scopes = (values.scope ?? []) as Scope[];
  if (action !== 'issue' || !values.tenant || scopes.length === 0 || !scopes.every((scope) => SCOPES.includes(scope))) throw new UsageError(usage);
  if (scopes.length > 1) {
    throw new UsageError(`a key holds one scope (the spec keeps separate credentials per scope): issue one key for each of ${[...new Set(scopes)].join(', ')}`);
  }
  await withContext(async ({ db, masterKey }) => {
    const outcome = await issueKey(db.pool, new SecretBox(masterKey), {
      tenantId: values.tenant!,
      scope: scopes[0]!,
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
  const usage = 'usage: svc assets add <X-ASSET> --tenant <tenant_id> --scale <0-18>';
  const [action, asset] = exactly(positionals, 2, usage);
  const scale = numberFlag(values.scale);
  if (action !== 'add' || !asset || !values.tenant || !Number.isInteger(scale)) throw new UsageError(usage);
  if (!NON_ISO_ASSET.test(asset)) throw new UsageError('only non-ISO assets (X- followed by 2-10 upper-case letters or digits) can be registered');
  if (scale < 0 || scale > MAX_SCALE) throw new UsageError(`scale must be 0-${MAX_SCALE}`);
  await withContext(async ({ db }) => {
    const outcome = await registerAsset(db.pool, values.tenant!, asset, scale);
    switch (outcome.kind) {
      case 'registered':
        // Each process caches a tenant's registry (platform/assets/tenant-registry.ts).
        return print(`asset ${asset} registered for ${values.tenant} with scale ${scale}; every API process takes it within 30 s`);
      case 'unknown_tenant':
        throw new UsageError(`no tenant ${values.tenant}`);
      case 'conflict':
        throw new UsageError(`asset ${asset} is already registered for ${values.tenant} with scale ${outcome.scale}`);
    }
  });
}
