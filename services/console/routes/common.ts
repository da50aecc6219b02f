import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { GraphStore } from '../../../platform/graph/port.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { CursorCodec } from '../../../platform/http/cursor.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';
import { consoleContext } from '../app.ts';
import { writeAudit } from '../store.ts';

export interface ConsoleRouteDeps {
  pool: Pool;
  clock: Clock;
  cursors: CursorCodec;
  graph: GraphStore;
  assets: TenantAssetRegistry;
}

export const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) =>
  sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

// Appends one analyst action or view to console_audit, as the session's user.
export async function auditAs(db: Pick<Pool, 'query'>, request: FastifyRequest, action: string, subject: string, details: Record<string, unknown>, at: Date): Promise<void> {
  const { user } = consoleContext(request);
  await writeAudit(db, { tenantId: user.tenant_id, actor: { kind: 'user', userId: user.user_id }, action, subject, details, at });
}
