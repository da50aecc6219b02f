import { parseArgs } from 'node:util';
import { systemClock } from '../../../platform/clock.ts';
import { CONSOLE_ROLES } from '../../../schemas/console/requests.ts';
import { createConsoleUser, disableConsoleUser, listConsoleUsers, unlockConsoleUser } from '../../console/users.ts';
import { requireTenant, UsageError, withContext } from '../context.ts';

type Print = (line: string) => void;

export const CONSOLE_USERS_USAGE = `usage: svc console-users create --tenant <tenant_id> --email <email> --role <${CONSOLE_ROLES.join('|')}>
       svc console-users list --tenant <tenant_id> [--json]
       svc console-users disable --tenant <tenant_id> --email <email>
       svc console-users unlock --tenant <tenant_id> --email <email>`;

// The analysts' console users of a tenant (services/console). A new user gets a one-time password,
// printed once and never stored in clear, which must be changed at first login.
export async function consoleUsersCommand(args: string[], print: Print): Promise<void> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, ...extra] = positionals;
  const tenant = values.tenant;
  if (!tenant || extra.length > 0) throw new UsageError(CONSOLE_USERS_USAGE);
  switch (action) {
    case 'create': {
      if (!values.email || !values.role) throw new UsageError(CONSOLE_USERS_USAGE);
      return withContext(async ({ db }) => {
        const outcome = await createConsoleUser(db.pool, { tenantId: tenant, email: values.email!, role: values.role! }, systemClock.now());
        if (outcome.kind === 'invalid') throw new UsageError(outcome.message);
        if (outcome.kind === 'exists') throw new UsageError(`tenant ${tenant} already has a console user ${values.email}`);
        print(`console user ${outcome.user.email} (${outcome.user.role}) created in tenant ${tenant}`);
        print(`one-time password (shown once; it must be changed at first login): ${outcome.password}`);
      });
    }
    case 'list':
      return withContext(async (context) => {
        await requireTenant(context, tenant);
        const users = await listConsoleUsers(context.db.pool, tenant, systemClock.now());
        if (values.json) return print(JSON.stringify(users, null, 2));
        if (users.length === 0) return print(`tenant ${tenant} has no console users`);
        for (const u of users) {
          const state = u.disabled ? 'disabled' : u.locked_until ? `locked until ${u.locked_until}` : u.must_change_password ? 'must change password' : 'active';
          print(`${u.email}\t${u.role}\t${state}\t${u.user_id}`);
        }
      });
    case 'disable':
    case 'unlock': {
      if (!values.email) throw new UsageError(CONSOLE_USERS_USAGE);
      return withContext(async ({ db }) => {
        const missing = () => new UsageError(`tenant ${tenant} has no console user ${values.email}`);
        if (action === 'unlock') {
          if (!(await unlockConsoleUser(db.pool, tenant, values.email!, systemClock.now()))) throw missing();
          return print(`console user ${values.email} unlocked`);
        }
        const disabled = await disableConsoleUser(db.pool, tenant, values.email!, systemClock.now());
        if (!disabled) throw missing();
        const cases = disabled.casesReleased === 1 ? '1 case it held is' : `${disabled.casesReleased} cases it held are`;
        print(`console user ${values.email} disabled; its sessions are ended; ${cases} unassigned again`);
      });
    }
    default:
      throw new UsageError(CONSOLE_USERS_USAGE);
  }
}
