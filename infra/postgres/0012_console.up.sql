-- The analysts' console (services/console, docs/decisions/0017-console-auth.md): its users, their
-- server-side sessions and the append-only audit log of every console action.

-- Users are per tenant; an email is unique within a tenant regardless of case. Passwords are
-- stored only as scrypt hashes in a PHC-like string that carries its own parameters.
CREATE TABLE console_users (
  user_id              uuid PRIMARY KEY,
  tenant_id            text NOT NULL REFERENCES tenants (tenant_id),
  email                text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  role                 text NOT NULL CHECK (role IN ('analyst', 'supervisor')),
  password_hash        text NOT NULL,
  must_change_password boolean NOT NULL DEFAULT true,
  failed_attempts      integer NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
  locked_until         timestamptz,
  created_at           timestamptz NOT NULL,
  password_changed_at  timestamptz,
  disabled             boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX console_users_email ON console_users (tenant_id, lower(email));

-- A session is identified by the SHA-256 of its random token; the token itself (the cookie) is
-- never stored, nor is the CSRF token (only its SHA-256). It ends at expires_at (absolute), after
-- the idle timeout measured from last_seen_at (checked by the service, whose clock is injected),
-- or when revoked (logout, password change, user disabled).
CREATE TABLE console_sessions (
  session_id   bytea PRIMARY KEY CHECK (length(session_id) = 32),
  user_id      uuid NOT NULL REFERENCES console_users (user_id),
  tenant_id    text NOT NULL REFERENCES tenants (tenant_id),
  csrf_hash    bytea NOT NULL CHECK (length(csrf_hash) = 32),
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  CHECK (expires_at > created_at)
);
CREATE INDEX console_sessions_user ON console_sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- Append-only: every login, failure, lock-out, logout, password change and operator action on
-- users. No foreign keys, so the log outlives what it names (and records attempts on tenants or
-- emails that do not exist). UPDATE, DELETE and TRUNCATE are refused by triggers.
CREATE TABLE console_audit (
  audit_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id     text NOT NULL,
  actor_kind    text NOT NULL CHECK (actor_kind IN ('user', 'operator', 'anonymous')),
  actor_user_id uuid,
  action        text NOT NULL,
  subject       text,
  details       jsonb NOT NULL DEFAULT '{}'::jsonb,
  at            timestamptz NOT NULL
);
CREATE INDEX console_audit_tenant ON console_audit (tenant_id, at DESC, audit_id DESC);

CREATE FUNCTION console_audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'console_audit is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER console_audit_no_update_delete BEFORE UPDATE OR DELETE ON console_audit
  FOR EACH ROW EXECUTE FUNCTION console_audit_refuse_change();
CREATE TRIGGER console_audit_no_truncate BEFORE TRUNCATE ON console_audit
  FOR EACH STATEMENT EXECUTE FUNCTION console_audit_refuse_change();
