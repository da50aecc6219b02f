import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Pool } from '../../../platform/postgres/pool.ts';
import { CSRF_HEADER, SESSION_COOKIE } from '../app.ts';
import { createConsoleUser } from '../users.ts';

export interface ConsoleSession {
  cookie: string;
  csrf: string;
  userId: string;
  email: string;
}

// A new console user of the tenant, signed in through the console's own login, its first password
// changed as the console asks before anything else.
export async function signIn(app: FastifyInstance, pool: Pool, now: Date, tenant: string, email: string, role: 'analyst' | 'supervisor'): Promise<ConsoleSession> {
  const created = await createConsoleUser(pool, { tenantId: tenant, email, role }, now);
  if (created.kind !== 'created') throw new Error(created.kind);
  const login = await app.inject({ method: 'POST', url: '/console/v1/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ tenant, email, password: created.password }) });
  const cookie = new RegExp(`${SESSION_COOKIE}=([^;]*)`).exec(String(login.headers['set-cookie']))![1]!;
  const session = { cookie, csrf: login.json().csrf_token as string, userId: created.user.user_id, email };
  const changed = await app.inject({
    method: 'POST',
    url: '/console/v1/password',
    headers: { cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: session.csrf, 'content-type': 'application/json' },
    payload: JSON.stringify({ current_password: created.password, new_password: 'correct horse battery staple' }),
  });
  expect(changed.statusCode).toBe(200);
  return session;
}
