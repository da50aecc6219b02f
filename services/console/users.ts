import { ID_PREFIXES } from '../../platform/ids.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { lockTenantDetection } from '../detection/detection-lock.ts';
import { releaseOpenCases } from './queries/cases.ts';
import { CONSOLE_ROLES, consoleEmail, type ConsoleRole } from '../../schemas/console/requests.ts';
import { hashPassword, oneTimePassword } from './password.ts';
import { findUserByEmail, insertUser, revokeUserSessions, writeAudit, type ConsoleUser } from './store.ts';

// What the operator does to console users (`svc console-users …`); every change is audited with
// the operator as actor, in the change's own transaction: no change without its audit row, and
// no user whose one-time password was never shown.

export type CreateUserOutcome =
  | { kind: 'created'; user: ConsoleUser; password: string }
  | { kind: 'exists' }
  | { kind: 'invalid'; message: string };

export async function createConsoleUser(
  pool: Pool,
  input: { tenantId: string; email: string; role: string },
  at: Date,
): Promise<CreateUserOutcome> {
  if (!(CONSOLE_ROLES as readonly string[]).includes(input.role)) return { kind: 'invalid', message: `role must be one of ${CONSOLE_ROLES.join(', ')}` };
  if (!consoleEmail.safeParse(input.email).success) return { kind: 'invalid', message: `${input.email} is not an email address` };
  const tenant = await pool.query('SELECT 1 FROM tenants WHERE tenant_id = $1', [input.tenantId]);
  if (tenant.rowCount === 0) return { kind: 'invalid', message: `no tenant ${input.tenantId}` };
  const password = oneTimePassword();
  const passwordHash = await hashPassword(password);
  return withTransaction(pool, async (db) => {
    const user = await insertUser(db, { tenantId: input.tenantId, email: input.email, role: input.role as ConsoleRole, passwordHash, at });
    if (!user) return { kind: 'exists' } as const;
    await writeAudit(db, { tenantId: user.tenant_id, actor: { kind: 'operator' }, action: 'user.created', subject: user.user_id, details: { email: user.email, role: user.role }, at });
    return { kind: 'created', user, password } as const;
  });
}

export interface ListedUser {
  user_id: string;
  email: string;
  role: ConsoleRole;
  must_change_password: boolean;
  locked_until: string | null;
  disabled: boolean;
  created_at: string;
}

export async function listConsoleUsers(pool: Pool, tenantId: string, at: Date): Promise<ListedUser[]> {
  const { rows } = await pool.query<ConsoleUser>('SELECT * FROM console_users WHERE tenant_id = $1 ORDER BY lower(email)', [tenantId]);
  return rows.map((u) => ({
    user_id: u.user_id,
    email: u.email,
    role: u.role,
    must_change_password: u.must_change_password,
    // Only a lock still in force.
    locked_until: u.locked_until && u.locked_until.getTime() > at.getTime() ? u.locked_until.toISOString() : null,
    disabled: u.disabled,
    created_at: u.created_at.toISOString(),
  }));
}

// Disabling ends every session of the user at once; a disabled user's logins fail like a wrong
// password. The cases they held that are not closed go back to the unassigned queue (each
// audited), where analysts can take them: nobody would work them otherwise.
export async function disableConsoleUser(pool: Pool, tenantId: string, email: string, at: Date): Promise<{ casesReleased: number } | undefined> {
  const user = await findUserByEmail(pool, tenantId, email);
  if (!user) return undefined;
  return withTransaction(pool, async (db) => {
    // Detection changes cases under this lock; so does every other case change.
    await lockTenantDetection(db, tenantId);
    await db.query('UPDATE console_users SET disabled = true WHERE tenant_id = $1 AND user_id = $2', [tenantId, user.user_id]);
    const revoked = await revokeUserSessions(db, user.user_id, at);
    const released = await releaseOpenCases(db, tenantId, user.user_id);
    for (const episodeId of released) {
      await writeAudit(db, {
        tenantId,
        actor: { kind: 'operator' },
        action: 'case.assigned',
        subject: ID_PREFIXES.episode + episodeId,
        details: { from: user.user_id, to: null, to_email: null, reason: 'user_disabled' },
        at,
      });
    }
    await writeAudit(db, { tenantId, actor: { kind: 'operator' }, action: 'user.disabled', subject: user.user_id, details: { sessions_revoked: revoked, cases_released: released.length }, at });
    return { casesReleased: released.length };
  });
}

// Lifts a lock-out and clears the failure count.
export async function unlockConsoleUser(pool: Pool, tenantId: string, email: string, at: Date): Promise<boolean> {
  const user = await findUserByEmail(pool, tenantId, email);
  if (!user) return false;
  await withTransaction(pool, async (db) => {
    await db.query('UPDATE console_users SET failed_attempts = 0, locked_until = NULL WHERE tenant_id = $1 AND user_id = $2', [tenantId, user.user_id]);
    await writeAudit(db, { tenantId, actor: { kind: 'operator' }, action: 'user.unlocked', subject: user.user_id, at });
  });
  return true;
}
