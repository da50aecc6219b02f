import { coalescing } from '../batching/coalesce.ts';
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

interface Take {
  cost: number;
  resolve: (state: BucketState) => void;
  reject: (error: unknown) => void;
}

// Per-tenant token buckets measured in events, kept in PostgreSQL so the limit holds across
// every API process sharing the database. Takes of one tenant that arrive together are settled
// by ONE UPDATE (one round trip, one row lock) that refills by elapsed time and deducts the
// longest prefix of their costs that fits: takes are served in arrival order.
export class TokenBuckets {
  private readonly limits = new Map<string, { limits: BucketLimits; expiresAt: number }>();
  private readonly created = new Set<string>();
  private readonly pending = new Map<string, Take[]>();
  private readonly busy = new Set<string>();
  private readonly scheduleFlush = coalescing(() => {
    for (const tenantId of this.pending.keys()) void this.flush(tenantId);
  });

  constructor(
    private readonly pool: Pool,
    private readonly clock: Clock,
    private readonly defaults: BucketLimits,
  ) {}

  take(tenantId: string, cost: number): Promise<BucketState> {
    return new Promise((resolve, reject) => {
      const queue = this.pending.get(tenantId);
      if (queue) queue.push({ cost, resolve, reject });
      else this.pending.set(tenantId, [{ cost, resolve, reject }]);
      this.scheduleFlush();
    });
  }

  private async flush(tenantId: string): Promise<void> {
    if (this.busy.has(tenantId)) return;
    const takes = this.pending.get(tenantId);
    if (!takes || takes.length === 0) return;
    this.pending.delete(tenantId);
    this.busy.add(tenantId);
    try {
      const limits = await this.limitsFor(tenantId);
      const now = this.clock.now();
      await this.ensureBucket(tenantId, limits, now);
      let row = await this.takeTokens(tenantId, now, limits, takes);
      if (!row) {
        // The bucket is gone though this process made it: rate_limit_buckets is unlogged, so a
        // database crash empties it. It starts again full, as a new tenant's would.
        this.created.delete(tenantId);
        await this.ensureBucket(tenantId, limits, now);
        row = await this.takeTokens(tenantId, now, limits, takes);
        if (!row) throw new Error(`no rate-limit bucket for tenant ${tenantId}`);
      }
      const { tokens, last_available: available } = row;
      let spent = 0;
      let open = true;
      for (const take of takes) {
        open = open && spent + take.cost <= available;
        if (open) spent += take.cost;
        take.resolve(state(limits, tokens, open, take.cost));
      }
    } catch (error) {
      for (const take of takes) take.reject(error);
    } finally {
      this.busy.delete(tenantId);
      void this.flush(tenantId);
    }
  }

  // Refills by elapsed time and deducts the longest prefix of the takes' costs that fits;
  // undefined when the tenant has no bucket row.
  private async takeTokens(tenantId: string, now: Date, limits: BucketLimits, takes: Take[]): Promise<{ tokens: number; last_available: number } | undefined> {
    const { rows } = await this.pool.query<{ tokens: number; last_available: number }>({
      name: 'take-tokens',
      text: `UPDATE rate_limit_buckets SET
         tokens = ${AVAILABLE} - (SELECT coalesce(max(spent), 0) FROM
                    (SELECT sum(c) OVER (ORDER BY o) AS spent FROM unnest($5::float8[]) WITH ORDINALITY AS u(c, o)) prefix
                   WHERE spent <= ${AVAILABLE}),
         last_available = ${AVAILABLE},
         refreshed_at = GREATEST(refreshed_at, $2)
       WHERE tenant_id = $1
       RETURNING tokens, last_available`,
      values: [tenantId, now, limits.capacity, limits.refillPerS, takes.map((t) => t.cost)],
    });
    return rows[0];
  }

  // The bucket as it stands, for responses that report it without spending.
  async peek(tenantId: string): Promise<BucketState> {
    const limits = await this.limitsFor(tenantId);
    const { rows } = await this.pool.query<{ available: number }>(
      `SELECT ${AVAILABLE} AS available FROM rate_limit_buckets WHERE tenant_id = $1`,
      [tenantId, this.clock.now(), limits.capacity, limits.refillPerS],
    );
    return state(limits, rows[0]?.available ?? limits.capacity, true, 0);
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
    if (cached && cached.expiresAt > Date.now()) return cached.limits;
    const { rows } = await this.pool.query<{ capacity: number | null; refill: number | null }>(
      'SELECT rate_limit_capacity AS capacity, rate_limit_refill_per_s AS refill FROM tenants WHERE tenant_id = $1',
      [tenantId],
    );
    const limits = {
      capacity: rows[0]?.capacity ?? this.defaults.capacity,
      refillPerS: rows[0]?.refill ?? this.defaults.refillPerS,
    };
    this.limits.set(tenantId, { limits, expiresAt: Date.now() + LIMITS_TTL_MS });
    return limits;
  }
}

// Tokens available at $2 (now), given capacity $3 and refill rate $4; time never runs backwards.
const AVAILABLE = `LEAST($3::float8, tokens + $4::float8 * GREATEST(0, EXTRACT(EPOCH FROM ($2::timestamptz - refreshed_at))))`;

function state(limits: BucketLimits, tokens: number, granted: boolean, cost: number): BucketState {
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
