import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import type { ConsoleRole } from '../../schemas/console/requests.ts';

// Console users, their sessions and the audit log, on PostgreSQL (infra/postgres/0012_console).

type Db = Pick<Pool, 'query'>;

export interface ConsoleUser {
  user_id: string;
  tenant_id: string;
  email: string;
  role: ConsoleRole;
  password_hash: string;
  must_change_password: boolean;
  failed_attempts: number;
  locked_until: Date | null;
  created_at: Date;
  disabled: boolean;
}

export interface ConsoleSession {
  session_id: Buffer;
  user_id: string;
  tenant_id: string;
  csrf_hash: Buffer;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

type AuditActor = { kind: 'user'; userId: string } | { kind: 'operator' } | { kind: 'anonymous' };

export interface AuditEntry {
  tenantId: string;
  actor: AuditActor;
  action: string;
  subject?: string;
  details?: Record<string, unknown>;
  at: Date;
}

export const sha256 = (value: string | Buffer): Buffer => createHash('sha256').update(value).digest();

// Equal-length digests compared in constant time.
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function writeAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO console_audit (tenant_id, actor_kind, actor_user_id, action, subject, details, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      entry.tenantId,
      entry.actor.kind,
      entry.actor.kind === 'user' ? entry.actor.userId : null,
      entry.action,
      entry.subject ?? null,
      JSON.stringify(entry.details ?? {}),
      entry.at,
    ],
  );
}

export async function findUserByEmail(db: Db, tenantId: string, email: string): Promise<ConsoleUser | undefined> {
  const { rows } = await db.query<ConsoleUser>('SELECT * FROM console_users WHERE tenant_id = $1 AND lower(email) = lower($2)', [tenantId, email]);
  return rows[0];
}

export async function findUser(db: Db, userId: string): Promise<ConsoleUser | undefined> {
  const { rows } = await db.query<ConsoleUser>('SELECT * FROM console_users WHERE user_id = $1', [userId]);
  return rows[0];
}

export async function insertUser(
  db: Db,
  user: { tenantId: string; email: string; role: ConsoleRole; passwordHash: string; at: Date },
): Promise<ConsoleUser | undefined> {
  const { rows } = await db.query<ConsoleUser>(
    `INSERT INTO console_users (user_id, tenant_id, email, role, password_hash, must_change_password, created_at)
     VALUES ($1, $2, $3, $4, $5, true, $6)
     ON CONFLICT (tenant_id, lower(email)) DO NOTHING
     RETURNING *`,
    [randomUUID(), user.tenantId, user.email, user.role, user.passwordHash, user.at],
  );
  return rows[0];
}

// One failed login, counted atomically; the attempt that reaches the threshold locks the user and
// starts the count again. Returns whether this attempt locked the user.
// Takes one password attempt before the password is checked, in one statement, so attempts racing
// each other cannot all pass a lock check made before any of them failed: the attempt is counted
// as a failure now (a success resets the count), the one that reaches the limit locks the user,
// and none is taken while the user is locked. An expired lock starts the count again.
// undefined: locked, no attempt.
export async function claimAttempt(
  db: Db,
  userId: string,
  policy: { attempts: number; lockMs: number },
  at: Date,
): Promise<{ locksNow: boolean; lockedUntil: Date | null } | undefined> {
  const { rows } = await db.query<{ locked_until: Date | null }>(
    `UPDATE console_users
        SET failed_attempts = CASE WHEN locked_until IS NOT NULL THEN 1 ELSE failed_attempts + 1 END,
            locked_until = CASE WHEN (CASE WHEN locked_until IS NOT NULL THEN 1 ELSE failed_attempts + 1 END) >= $2 THEN $3::timestamptz ELSE NULL END
      WHERE user_id = $1 AND (locked_until IS NULL OR locked_until <= $4)
      RETURNING locked_until`,
    [userId, policy.attempts, new Date(at.getTime() + policy.lockMs), at],
  );
  const row = rows[0];
  return row && { locksNow: row.locked_until !== null, lockedUntil: row.locked_until };
}

// The attempt taken was the right password: the count starts again, and a lock this very attempt
// set (it was the last one allowed) is lifted.
export async function recordSuccess(db: Db, userId: string, rehashed?: string): Promise<void> {
  await db.query(
    'UPDATE console_users SET failed_attempts = 0, locked_until = NULL, password_hash = coalesce($2, password_hash) WHERE user_id = $1',
    [userId, rehashed ?? null],
  );
}

async function setPassword(db: Db, userId: string, passwordHash: string, at: Date): Promise<void> {
  await db.query(
    'UPDATE console_users SET password_hash = $2, must_change_password = false, password_changed_at = $3 WHERE user_id = $1',
    [userId, passwordHash, at],
  );
}

// A password change as one transaction: the new hash, the failure count cleared, every other
// session ended and the audit row. Were it to stop half-way, a stolen session the change was
// meant to end would live on beside the new password.
export async function changePassword(
  pool: Pool,
  user: Pick<ConsoleUser, 'user_id' | 'tenant_id' | 'must_change_password'>,
  passwordHash: string,
  keep: Buffer,
  at: Date,
): Promise<number> {
  return withTransaction(pool, async (db) => {
    await recordSuccess(db, user.user_id);
    await setPassword(db, user.user_id, passwordHash, at);
    const revoked = await revokeUserSessions(db, user.user_id, at, keep);
    await writeAudit(db, {
      tenantId: user.tenant_id,
      actor: { kind: 'user', userId: user.user_id },
      action: 'password.changed',
      subject: user.user_id,
      details: { other_sessions_revoked: revoked, was_one_time: user.must_change_password },
      at,
    });
    return revoked;
  });
}

export interface IssuedSession {
  token: string;
  session: ConsoleSession;
}

// A new session: 32 random bytes as the cookie value; only their SHA-256 is stored, beside the
// SHA-256 of the session's CSRF token.
export async function createSession(db: Db, user: ConsoleUser, csrfHash: (token: string) => Buffer, at: Date, absoluteMs: number): Promise<IssuedSession> {
  const token = randomBytes(32).toString('base64url');
  const { rows } = await db.query<ConsoleSession>(
    `INSERT INTO console_sessions (session_id, user_id, tenant_id, csrf_hash, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $5, $6) RETURNING *`,
    [sha256(token), user.user_id, user.tenant_id, csrfHash(token), at, new Date(at.getTime() + absoluteMs)],
  );
  return { token, session: rows[0]! };
}

export async function findSession(db: Db, token: string): Promise<ConsoleSession | undefined> {
  const { rows } = await db.query<ConsoleSession>('SELECT * FROM console_sessions WHERE session_id = $1', [sha256(token)]);
  return rows[0];
}

export async function touchSession(db: Db, sessionId: Buffer, at: Date): Promise<void> {
  await db.query('UPDATE console_sessions SET last_seen_at = $2 WHERE session_id = $1 AND last_seen_at < $2', [sessionId, at]);
}

export async function revokeSession(db: Db, sessionId: Buffer, at: Date): Promise<void> {
  await db.query('UPDATE console_sessions SET revoked_at = $2 WHERE session_id = $1 AND revoked_at IS NULL', [sessionId, at]);
}

// Every open session of a user, but one (the caller's, on a password change).
export async function revokeUserSessions(db: Db, userId: string, at: Date, except?: Buffer): Promise<number> {
  const result = await db.query(
    'UPDATE console_sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL AND ($3::bytea IS NULL OR session_id <> $3)',
    [userId, at, except ?? null],
  );
  return result.rowCount ?? 0;
}
