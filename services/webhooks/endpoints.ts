// Webhook endpoints of a tenant: registration, listing, enabling and disabling, deletion and secret
// rotation. Every statement filters on the tenant; another tenant's endpoint is answered like an
// unknown one. A disabled or deleted endpoint receives nothing: its pending deliveries are
// cancelled (they stay in the delivery log and can be replayed once it is enabled again).
import type { SecretBox } from '../../platform/crypto/secret-box.ts';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { Channel, WebhookEventType } from '../../schemas/webhooks/catalog.ts';
import type { WebhookEndpointView } from '../../schemas/webhooks/resources.ts';
import type { RegistrationCheck } from './registration.ts';
import { newWebhookSecret } from '../../clients/typescript/src/signing.ts';

export interface EndpointRow {
  endpoint_id: string;
  url: string;
  channel: Channel;
  event_types: WebhookEventType[];
  description: string | null;
  status: 'enabled' | 'disabled';
  previous_secret_valid_until: Date | null;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `endpoint_id, url, channel, event_types, description, status, previous_secret_valid_until, verified_at, created_at, updated_at`;

// The most secrets that sign one delivery (one v1 each): the current one and those still in
// their overlap. It bounds the signature header whatever the rotations.
export const MAX_SIGNING_SECRETS = 10;

// The associated data that binds a sealed secret to its endpoint's row.
export const secretBinding = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export function endpointView(row: EndpointRow, now: Date): WebhookEndpointView {
  const overlap = row.previous_secret_valid_until && row.previous_secret_valid_until > now ? row.previous_secret_valid_until : null;
  return {
    endpoint_id: `${ID_PREFIXES.webhookEndpoint}${row.endpoint_id}`,
    url: row.url,
    channel: row.channel,
    event_types: row.event_types,
    description: row.description,
    status: row.status,
    previous_secret_valid_until: overlap?.toISOString() ?? null,
    verified_at: row.verified_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export class WebhookEndpoints {
  constructor(
    private readonly pool: Pool,
    private readonly box: SecretBox,
  ) {}

  async register(tenantId: string, checked: Extract<RegistrationCheck, { ok: true }>['registration'], now: Date): Promise<{ row: EndpointRow; secret: string }> {
    const endpointId = uuidv7(now.getTime());
    const secret = newWebhookSecret();
    const { rows } = await this.pool.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, channel, event_types, description, status, secret_sealed, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'enabled', $7, $8, $8)
       RETURNING ${COLUMNS}`,
      [tenantId, endpointId, checked.url, checked.channel, checked.event_types, checked.description ?? null, this.box.seal(Buffer.from(secret, 'utf8'), secretBinding(endpointId)), now],
    );
    return { row: rows[0]!, secret };
  }

  async find(tenantId: string, endpointId: string): Promise<EndpointRow | undefined> {
    const { rows } = await this.pool.query<EndpointRow>(
      `SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL`,
      [tenantId, endpointId],
    );
    return rows[0];
  }

  // Oldest first; `after` is the (created_at, endpoint_id) of the last row of the previous page.
  async list(tenantId: string, limit: number, after?: { at: string; id: string }): Promise<EndpointRow[]> {
    const { rows } = await this.pool.query<EndpointRow>(
      `SELECT ${COLUMNS} FROM webhook_endpoints
        WHERE tenant_id = $1 AND deleted_at IS NULL
          AND ($2::timestamptz IS NULL OR (created_at, endpoint_id) > ($2::timestamptz, $3::uuid))
        ORDER BY created_at, endpoint_id
        LIMIT $4`,
      [tenantId, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  async setStatus(tenantId: string, endpointId: string, status: 'enabled' | 'disabled', now: Date): Promise<EndpointRow | undefined> {
    return withTransaction(this.pool, async (db) => {
      const { rows } = await db.query<EndpointRow>(
        `UPDATE webhook_endpoints SET status = $3, updated_at = CASE WHEN status = $3 THEN updated_at ELSE $4 END
          WHERE tenant_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL
          RETURNING ${COLUMNS}`,
        [tenantId, endpointId, status, now],
      );
      if (rows[0] && status === 'disabled') await cancelPending(db, tenantId, endpointId, now);
      return rows[0];
    });
  }

  async delete(tenantId: string, endpointId: string, now: Date): Promise<boolean> {
    return withTransaction(this.pool, async (db) => {
      // The sealed secrets go with the endpoint; its delivery log stays.
      const { rowCount } = await db.query(
        `UPDATE webhook_endpoints SET deleted_at = $3, updated_at = $3, status = 'disabled', secret_sealed = '\\x'::bytea,
                previous_secret_sealed = NULL, previous_secret_valid_until = NULL
          WHERE tenant_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL`,
        [tenantId, endpointId, now],
      );
      if (rowCount === 0) return false;
      await db.query(`DELETE FROM webhook_retired_secrets WHERE tenant_id = $1 AND endpoint_id = $2`, [tenantId, endpointId]);
      await cancelPending(db, tenantId, endpointId, now);
      return true;
    });
  }

  // The new secret signs from now on; the current one keeps signing until validUntil. A rotation
  // during an overlap keeps the previous secret signing until the instant its own rotation gave
  // (webhook_retired_secrets), so every promised overlap holds. At most MAX_SIGNING_SECRETS sign:
  // past that, the retired secret whose overlap ends first stops at once (decision 0062).
  async rotateSecret(tenantId: string, endpointId: string, overlapS: number, now: Date): Promise<{ secret: string; previousValidUntil: Date } | undefined> {
    const secret = newWebhookSecret();
    const validUntil = new Date(now.getTime() + overlapS * 1000);
    return withTransaction(this.pool, async (db) => {
      const { rows } = await db.query<{ previous_secret_sealed: Buffer | null; previous_secret_valid_until: Date | null }>(
        `SELECT previous_secret_sealed, previous_secret_valid_until FROM webhook_endpoints
          WHERE tenant_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL FOR UPDATE`,
        [tenantId, endpointId],
      );
      const endpoint = rows[0];
      if (!endpoint) return undefined;
      await db.query(`DELETE FROM webhook_retired_secrets WHERE tenant_id = $1 AND endpoint_id = $2 AND valid_until <= $3`, [tenantId, endpointId, now]);
      if (endpoint.previous_secret_sealed && endpoint.previous_secret_valid_until && endpoint.previous_secret_valid_until > now) {
        await db.query(
          `INSERT INTO webhook_retired_secrets (tenant_id, endpoint_id, secret_id, secret_sealed, valid_until) VALUES ($1, $2, $3, $4, $5)`,
          [tenantId, endpointId, uuidv7(now.getTime()), endpoint.previous_secret_sealed, endpoint.previous_secret_valid_until],
        );
        // The current secret and the one it retires sign as well.
        await db.query(
          `DELETE FROM webhook_retired_secrets WHERE tenant_id = $1 AND endpoint_id = $2 AND secret_id IN (
             SELECT secret_id FROM webhook_retired_secrets WHERE tenant_id = $1 AND endpoint_id = $2
              ORDER BY valid_until DESC, secret_id DESC OFFSET $3)`,
          [tenantId, endpointId, MAX_SIGNING_SECRETS - 2],
        );
      }
      await db.query(
        `UPDATE webhook_endpoints
            SET previous_secret_sealed = secret_sealed, previous_secret_valid_until = $4, secret_sealed = $3, updated_at = $5
          WHERE tenant_id = $1 AND endpoint_id = $2`,
        [tenantId, endpointId, this.box.seal(Buffer.from(secret, 'utf8'), secretBinding(endpointId)), validUntil, now],
      );
      return { secret, previousValidUntil: validUntil };
    });
  }

  async markVerified(tenantId: string, endpointId: string, at: Date): Promise<void> {
    await this.pool.query(`UPDATE webhook_endpoints SET verified_at = $3 WHERE tenant_id = $1 AND endpoint_id = $2 AND deleted_at IS NULL`, [
      tenantId,
      endpointId,
      at,
    ]);
  }
}

async function cancelPending(db: PoolClient, tenantId: string, endpointId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, completed_at = $3
      WHERE tenant_id = $1 AND endpoint_id = $2 AND status = 'pending'`,
    [tenantId, endpointId, now],
  );
}
