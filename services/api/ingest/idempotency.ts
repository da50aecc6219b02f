import type { PoolClient, Pool } from '../../../platform/postgres/pool.ts';

// A response as stored for Idempotency-Key replays: returned verbatim.
export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface IdempotencyScope {
  tenantId: string;
  endpoint: string;
  key: string;
}

export type IdempotencyClaim =
  // This request owns the key: process it in the same transaction and store its response.
  | { kind: 'owned' }
  // The key already holds the response of the same request.
  | { kind: 'replay'; response: StoredResponse }
  // The key holds the response of a different body: 409 svc:idempotency/key_conflict.
  | { kind: 'conflict' };

export const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

// Claims the key inside the caller's transaction. The claim is an INSERT: a concurrent request
// with the same key blocks on the unique index until this transaction ends (the per-key lock),
// then finds the stored response and replays it. An expired row counts as absent.
export async function claimIdempotencyKey(
  client: PoolClient,
  scope: IdempotencyScope,
  requestHash: Buffer,
  now: Date,
  retentionS: number,
): Promise<IdempotencyClaim> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await client.query(
      `INSERT INTO idempotency_keys (tenant_id, endpoint, idempotency_key, request_hash, status_code, content_type, response_body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, 0, '', '', $5, $5::timestamptz + make_interval(secs => $6))
       ON CONFLICT DO NOTHING`,
      [scope.tenantId, scope.endpoint, scope.key, requestHash, now, retentionS],
    );
    if (claimed.rowCount === 1) return { kind: 'owned' };
    const { rows } = await client.query<{ request_hash: Buffer; status_code: number; content_type: string; response_body: Buffer; expires_at: Date }>(
      `SELECT request_hash, status_code, content_type, response_body, expires_at FROM idempotency_keys
        WHERE tenant_id = $1 AND endpoint = $2 AND idempotency_key = $3`,
      [scope.tenantId, scope.endpoint, scope.key],
    );
    const row = rows[0];
    if (!row) continue;
    if (row.expires_at <= now) {
      await client.query(
        'DELETE FROM idempotency_keys WHERE tenant_id = $1 AND endpoint = $2 AND idempotency_key = $3 AND expires_at <= $4',
        [scope.tenantId, scope.endpoint, scope.key, now],
      );
      continue;
    }
    if (!row.request_hash.equals(requestHash)) return { kind: 'conflict' };
    return { kind: 'replay', response: { status: row.status_code, contentType: row.content_type, body: row.response_body.toString('utf8') } };
  }
  throw new Error('idempotency key could not be claimed');
}

export async function storeIdempotentResponse(client: PoolClient, scope: IdempotencyScope, response: StoredResponse): Promise<void> {
  await client.query(
    `UPDATE idempotency_keys SET status_code = $4, content_type = $5, response_body = $6
      WHERE tenant_id = $1 AND endpoint = $2 AND idempotency_key = $3`,
    [scope.tenantId, scope.endpoint, scope.key, response.status, response.contentType, Buffer.from(response.body, 'utf8')],
  );
}

export async function sweepIdempotencyKeys(pool: Pool, now: Date): Promise<number> {
  const result = await pool.query('DELETE FROM idempotency_keys WHERE expires_at <= $1', [now]);
  return result.rowCount ?? 0;
}
