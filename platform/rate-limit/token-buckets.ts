import type { Clock } from '../clock.ts';
import type { Pool } from '../postgres/pool.ts';

export interface BucketLimits {
  capacity: number;
  refillPerS: number;
}

export interface BucketState {
  granted: boolean;
  // Svc-RateLimit-Limit: the bucket capacity in events.
  limit: number;
  // Svc-RateLimit-Remaining: whole tokens left.
  remaining: number;
  // Svc-RateLimit-Reset: seconds until the bucket is full again.
  resetS: number;
  // Retry-After for a refusal: seconds until the cost could be paid.
  retryAfterS: number;
}

const LIMITS_TTL_MS = 30_000;

// Per-tenant token buckets measured in events, kept in PostgreSQL so the limit holds across every
// API process sharing the database. A request is charged in the statement that admits it
// (platform/inbox/accept-events.ts): that statement refills the bucket by elapsed time and
// deducts, in arrival order, each request's cost that what is left still pays. This class keeps
// what a process needs around that statement: each tenant's limits, whether its row exists, and
// the bucket as this process last saw it.
export class TokenBuckets {
  private readonly limits = new Map<string, { limits: BucketLimits; expiresAt: number }>();
  private readonly created = new Set<string>();
  private readonly lastSeen = new Map<string, { tokens: number; atMs: number; limits: BucketLimits }>();

  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock,
    private readonly defaults: BucketLimits,
  ) {}

  // The tenant's limits, its bucket row made (full) if this process has not seen it yet.
  async prepare(tenantId: string): Promise<BucketLimits> {
    const limits = await this.limitsFor(tenantId);
    if (!this.created.has(tenantId)) await this.ensureBucket(tenantId, limits, this.clock.now());
    return limits;
  }

  // The row is gone though this process made it: rate_limit_buckets is unlogged, so a database
  // crash empties it. It starts again full, as a new tenant's would.
  async recreate(tenantId: string): Promise<void> {
    this.created.delete(tenantId);
    await this.prepare(tenantId);
  }

  // What a charge left in the bucket, as the answer to one of its requests reports it.
  settle(tenantId: string, limits: BucketLimits, tokens: number, granted: boolean, cost: number): BucketState {
    this.lastSeen.set(tenantId, { tokens, atMs: this.clock.now().getTime(), limits });
    return bucketState(limits, tokens, granted, cost);
  }

  // Whether the bucket as last seen here, refilled since, could not pay `cost`. Only a hint: the
  // charge itself is always made in PostgreSQL, but a request likely to be refused is charged
  // before its events are validated, so a tenant over its limit costs no validation work.
  likelyShort(tenantId: string, cost: number): boolean {
    const seen = this.lastSeen.get(tenantId);
    if (!seen) return false;
    const elapsedS = Math.max(0, (this.clock.now().getTime() - seen.atMs) / 1000);
    return Math.min(seen.limits.capacity, seen.tokens + seen.limits.refillPerS * elapsedS) < cost;
  }

  // The bucket as it stands, for responses that report it without spending.
  async peek(tenantId: string): Promise<BucketState> {
    const limits = await this.limitsFor(tenantId);
    const { rows } = await this.pool.query<{ available: number }>(
      `SELECT ${AVAILABLE} AS available FROM rate_limit_buckets WHERE tenant_id = $1`,
      [tenantId, this.clock.now(), limits.capacity, limits.refillPerS],
    );
    return bucketState(limits, rows[0]?.available ?? limits.capacity, true, 0);
  }

  private async ensureBucket(tenantId: string, limits: BucketLimits, now: Date): Promise<void> {
    if (this.created.has(tenantId)) return;
    await this.pool.query(
      'INSERT INTO rate_limit_buckets (tenant_id, tokens, refreshed_at) VALUES ($1, $2, $3) ON CONFLICT (tenant_id) DO NOTHING',
      [tenantId, limits.capacity, now],
    );
    this.created.add(tenantId);
  }

  private async limitsFor(tenantId: string): Promise<BucketLimits> {
    const cached = this.limits.get(tenantId);
    if (cached && cached.expiresAt > this.clock.now().getTime()) return cached.limits;
    const { rows } = await this.pool.query<{ capacity: number | null; refill: number | null }>(
      'SELECT rate_limit_capacity AS capacity, rate_limit_refill_per_s AS refill FROM tenants WHERE tenant_id = $1',
      [tenantId],
    );
    const limits = {
      capacity: rows[0]?.capacity ?? this.defaults.capacity,
      refillPerS: rows[0]?.refill ?? this.defaults.refillPerS,
    };
    this.limits.set(tenantId, { limits, expiresAt: this.clock.now().getTime() + LIMITS_TTL_MS });
    return limits;
  }
}

// The tokens a bucket row holds at `now`, given its capacity and refill rate (SQL expressions);
// time never runs backwards.
export const availableTokens = (now: string, capacity: string, refillPerS: string): string =>
  `LEAST(${capacity}::float8, tokens + ${refillPerS}::float8 * GREATEST(0, EXTRACT(EPOCH FROM (${now}::timestamptz - refreshed_at))))`;

const AVAILABLE = availableTokens('$2', '$3', '$4');

function bucketState(limits: BucketLimits, tokens: number, granted: boolean, cost: number): BucketState {
  const missing = granted ? 0 : cost - tokens;
  return {
    granted,
    limit: limits.capacity,
    remaining: Math.max(0, Math.floor(tokens)),
    resetS: Math.max(0, Math.ceil((limits.capacity - tokens) / limits.refillPerS)),
    retryAfterS: Math.max(1, Math.ceil(missing / limits.refillPerS)),
  };
}

export async function setTenantRateLimit(pool: Pool, tenantId: string, limits: BucketLimits): Promise<boolean> {
  const result = await pool.query(
    'UPDATE tenants SET rate_limit_capacity = $2, rate_limit_refill_per_s = $3 WHERE tenant_id = $1',
    [tenantId, limits.capacity, limits.refillPerS],
  );
  return result.rowCount === 1;
}
