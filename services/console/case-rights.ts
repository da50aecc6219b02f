import type { ConsoleUser } from './store.ts';

// Who may assign a case (decision 0018, kept by 0030): a supervisor assigns any case to any active
// user of the tenant, or to nobody; an analyst may take an unassigned case (or keep their own) and
// give up their own, never move someone else's nor give one to another user.
export function mayAssign(user: Pick<ConsoleUser, 'role' | 'user_id'>, current: string | null, target: string | null): boolean {
  if (user.role === 'supervisor') return true;
  const mine = current === null || current === user.user_id;
  return mine && (target === null || target === user.user_id);
}
