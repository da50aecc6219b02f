import { coalescing } from '../batching/coalesce.ts';
import type { Pool } from '../postgres/pool.ts';
import type { ApiKey } from './api-keys.ts';

// A nonce is single-use per key for this long.
const NONCE_WINDOW_S = 600;

// How a claim meets an earlier one of the same key and nonce (api_nonces): it wins only over a
// claim older than the window (one exactly 600 s old still holds), and RETURNING then names it as
// claimed.
export const NONCE_CLAIM_CONFLICT = `ON CONFLICT (tenant_id, key_id, nonce) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
           WHERE api_nonces.claimed_at < EXCLUDED.claimed_at - make_interval(secs => ${NONCE_WINDOW_S})`;

interface Claim {
  tenantId: string;
  keyId: string;
  nonce: string;
  at: Date;
  resolve: (claimed: boolean) => void;
  reject: (error: unknown) => void;
}

// Nonce claims kept in Postgres, so single use holds across restarts and across API processes.
// Claims that arrive together share one INSERT (group commit): while a write is in flight the
// next claims queue up and go in the following statement, so a busy edge spends one round trip
// and one commit per group instead of one per request.
export class NonceLedger {
  private queue: Claim[] = [];
  private inFlight = 0;
  private readonly schedulePump = coalescing(() => this.pump());

  constructor(
    private readonly pool: Pool,
    private readonly options: { maxInFlight?: number; now?: () => Date } = {},
  ) {}

  // True when this call claimed the nonce; false when it was used within the window.
  claim(key: Pick<ApiKey, 'tenantId' | 'keyId'>, nonce: string, at: Date): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tenantId: key.tenantId, keyId: key.keyId, nonce, at, resolve, reject });
      this.schedulePump();
    });
  }

  async sweep(): Promise<number> {
    const now = this.options.now?.() ?? new Date();
    const cutoff = new Date(now.getTime() - NONCE_WINDOW_S * 1000);
    const result = await this.pool.query('DELETE FROM api_nonces WHERE claimed_at < $1', [cutoff]);
    return result.rowCount ?? 0;
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < (this.options.maxInFlight ?? 2)) {
      const group = this.queue;
      this.queue = [];
      this.inFlight++;
      void this.write(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async write(group: Claim[]): Promise<void> {
    // One row per (key, nonce) in a statement; a repeat inside the same group loses to the first.
    const first = new Map<string, Claim>();
    const repeats: Claim[] = [];
    for (const claim of group) {
      const id = `${claim.tenantId}\u0000${claim.keyId}\u0000${claim.nonce}`;
      if (first.has(id)) repeats.push(claim);
      else first.set(id, claim);
    }
    const claims = [...first.values()];
    try {
      // Named, so each connection parses and plans it once.
      const { rows } = await this.pool.query<{ tenant_id: string; key_id: string; nonce: string }>({
        name: 'claim-nonces',
        text: `INSERT INTO api_nonces (tenant_id, key_id, nonce, claimed_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS u(t, k, n, at)
            -- In key order, as the acceptance statement claims: two groups that share nonces then
            -- wait for each other instead of deadlocking.
            ORDER BY t, k, n
         ${NONCE_CLAIM_CONFLICT}
         RETURNING tenant_id, key_id, nonce`,
        values: [claims.map((c) => c.tenantId), claims.map((c) => c.keyId), claims.map((c) => c.nonce), claims.map((c) => c.at)],
      });
      const won = new Set(rows.map((r) => `${r.tenant_id}\u0000${r.key_id}\u0000${r.nonce}`));
      for (const [id, claim] of first) claim.resolve(won.has(id));
      for (const claim of repeats) claim.resolve(false);
    } catch (error) {
      for (const claim of group) claim.reject(error);
    }
  }
}
