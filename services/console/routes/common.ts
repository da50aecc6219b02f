import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { GraphStore } from '../../../platform/graph/port.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { CursorCodec } from '../../api/http/cursor.ts';
import { sendProblem } from '../../api/http/problem-reply.ts';
import type { QueryReader } from '../../api/http/query-params.ts';
import { consoleContext } from '../app.ts';
import { writeAudit } from '../store.ts';

export interface ConsoleRouteDeps {
  pool: Pool;
  clock: Clock;
  cursors: CursorCodec;
  graph: GraphStore;
  assets: TenantAssetRegistry;
}

export type Query = Record<string, unknown>;

export const notFound = (request: FastifyRequest, reply: FastifyReply, what: string) =>
  sendProblem(request, reply, 'svc:resource/not_found', { detail: `no ${what} with this id in this tenant` });

export const invalidQuery = (request: FastifyRequest, reply: FastifyReply, reader: QueryReader) =>
  sendProblem(request, reply, 'svc:request/invalid_parameter', { detail: 'invalid query parameters', errors: reader.errors });

// Appends one analyst action or view to console_audit, as the session's user.
export async function auditAs(db: Pick<Pool, 'query'>, request: FastifyRequest, action: string, subject: string, details: Record<string, unknown>, at: Date): Promise<void> {
  const { user } = consoleContext(request);
  await writeAudit(db, { tenantId: user.tenant_id, actor: { kind: 'user', userId: user.user_id }, action, subject, details, at });
}
