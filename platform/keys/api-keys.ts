import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Pool } from '../postgres/pool.ts';

// Operator-issued API credentials. The secret is 32 random bytes handed out once as base64url
// text and stored sealed under the master key; the key id is bound into the seal.
// compliance: alerts, episodes and case actions (restricted AML content; a read key cannot see them).
export const SCOPES = ['ingest', 'read', 'webhook_mgmt', 'compliance'] as const;
export type Scope = (typeof SCOPES)[number];
export type Environment = 'test' | 'live';

const KEY_PREFIX: Record<Environment, string> = { test: 'svc_test_', live: 'svc_live_' };
// Every id issueKey makes: an id of another shape names no key, without asking the database.
const KEY_ID = /^svc_(test|live)_[0-9a-f]{32}$/;

export interface ApiKey {
  keyId: string;
  tenantId: string;
  scopes: Scope[];
  environment: Environment;
  secret: Buffer;
}

interface IssuedKey {
  tenant_id: string;
  key_id: string;
  secret: string;
  scopes: Scope[];
  environment: Environment;
}

export type IssueOutcome =
  | { kind: 'issued'; key: IssuedKey }
  // No tenant with this id: tenants are created first.
  | { kind: 'unknown_tenant' };

export async function issueKey(
  pool: Pool,
  box: SecretBox,
  // One scope per key: the spec keeps separate credentials per scope (decision 0004).
  request: { tenantId: string; scope: Scope; environment: Environment },
): Promise<IssueOutcome> {
  const keyId = KEY_PREFIX[request.environment] + randomBytes(16).toString('hex');
  const secret = randomBytes(32);
  const sealed = box.seal(secret, sealContext(keyId));
  const result = await pool.query(
    `INSERT INTO api_keys (key_id, tenant_id, scopes, environment, secret_sealed)
     SELECT $1, tenant_id, $3, $4, $5 FROM tenants WHERE tenant_id = $2`,
    [keyId, request.tenantId, [request.scope], request.environment, sealed],
  );
  if (result.rowCount === 0) return { kind: 'unknown_tenant' };
  return {
    kind: 'issued',
    key: {
      tenant_id: request.tenantId,
      key_id: keyId,
      secret: secret.toString('base64url'),
      scopes: [request.scope],
      environment: request.environment,
    },
  };
}

export async function revokeKey(pool: Pool, keyId: string, at: Date): Promise<boolean> {
  const result = await pool.query('UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL', [keyId, at]);
  return result.rowCount === 1;
}

// Active keys by id, cached per process for a short time: a revocation takes effect everywhere
// within CACHE_TTL_MS. Unknown ids of the issued shape are cached too (briefly, and apart) so a
// flood of them stays off the database and never pushes a real key out of its cache.
const CACHE_TTL_MS = 30_000;
const MISS_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export class ApiKeyStore {
  private readonly keys = new Map<string, { key: ApiKey; expiresAt: number }>();
  private readonly misses = new Map<string, number>();

  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
    private readonly clock: Clock = systemClock,
  ) {}

  async find(keyId: string): Promise<ApiKey | undefined> {
    if (!KEY_ID.test(keyId)) return undefined;
    const now = this.clock.now().getTime();
    const cached = this.keys.get(keyId);
    if (cached && cached.expiresAt > now) return cached.key;
    if ((this.misses.get(keyId) ?? 0) > now) return undefined;
    const key = await this.load(keyId);
    if (key) remember(this.keys, keyId, { key, expiresAt: now + CACHE_TTL_MS });
    else remember(this.misses, keyId, now + MISS_TTL_MS);
    return key;
  }

  private async load(keyId: string): Promise<ApiKey | undefined> {
    const { rows } = await this.pool.query<{
      key_id: string;
      tenant_id: string;
      scopes: Scope[];
      environment: Environment;
      secret_sealed: Buffer;
    }>(
      `SELECT key_id, tenant_id, scopes, environment, secret_sealed
         FROM api_keys WHERE key_id = $1 AND revoked_at IS NULL`,
      [keyId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      keyId: row.key_id,
      tenantId: row.tenant_id,
      scopes: row.scopes,
      environment: row.environment,
      secret: this.box.open(row.secret_sealed, sealContext(row.key_id)),
    };
  }
}

// Oldest out first when full: a Map iterates in insertion order.
function remember<V>(cache: Map<string, V>, keyId: string, value: V): void {
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(keyId, value);
}

function sealContext(keyId: string): string {
  return `api_key:${keyId}`;
}
