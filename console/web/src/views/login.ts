import { ApiError, post, setSession, type SessionBody } from '../api.ts';
import { h, replace } from '../dom.ts';
import { navigate } from '../router.ts';
import { drawHeader } from '../header.ts';

const view = () => document.getElementById('view')!;

const safeNext = (next: string | null) => (next && next.startsWith('/console/') && !next.startsWith('//') ? next : '/console/cases');

export function loginView(_params: string[], query: URLSearchParams): void {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  // Sent here because the session ended under a page (main.ts): say so, and what became of the text.
  const ended = query.get('ended');
  const notice = ended
    ? h('p', { class: 'state', role: 'status' }, `Your session has ended. Log in again to go on${ended === 'kept' ? '; what you were writing is kept and will be back on the page' : ''}.`)
    : null;
  const form = h(
    'form',
    { class: 'card narrow', 'aria-label': 'log in' },
    h('h1', null, 'Log in'),
    notice,
    h('label', null, 'Tenant', h('input', { name: 'tenant', required: true, autocomplete: 'organization' })),
    h('label', null, 'Email', h('input', { name: 'email', type: 'email', required: true, autocomplete: 'username' })),
    h('label', null, 'Password', h('input', { name: 'password', type: 'password', required: true, autocomplete: 'current-password' })),
    message,
    h('button', { type: 'submit' }, 'Log in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    message.hidden = true;
    try {
      const body = await post<SessionBody>('/session', { tenant: data.get('tenant'), email: data.get('email'), password: data.get('password') });
      setSession(body);
      drawHeader();
      navigate(body.user.must_change_password ? `/console/password?next=${encodeURIComponent(safeNext(query.get('next')))}` : safeNext(query.get('next')), { replace: true });
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof ApiError ? error.message : 'the service cannot be reached';
    }
  });
  replace(view(), form);
  form.querySelector('input')!.focus();
}

export function passwordView(_params: string[], query: URLSearchParams): void {
  const message = h('p', { class: 'state error', role: 'alert', hidden: true });
  const form = h(
    'form',
    { class: 'card narrow', 'aria-label': 'change password' },
    h('h1', null, 'Change your password'),
    h('p', { class: 'muted' }, 'Choose a new password of 12 characters or more. A one-time password must be changed before anything else.'),
    h('label', null, 'Current password', h('input', { name: 'current_password', type: 'password', required: true, autocomplete: 'current-password' })),
    h('label', null, 'New password', h('input', { name: 'new_password', type: 'password', required: true, minlength: 12, autocomplete: 'new-password' })),
    h('label', null, 'Repeat the new password', h('input', { name: 'repeat', type: 'password', required: true, minlength: 12, autocomplete: 'new-password' })),
    message,
    h('button', { type: 'submit' }, 'Change password'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    message.hidden = true;
    if (data.get('new_password') !== data.get('repeat')) {
      message.hidden = false;
      message.textContent = 'the two new passwords differ';
      return;
    }
    try {
      const body = await post<SessionBody>('/password', { current_password: data.get('current_password'), new_password: data.get('new_password') });
      setSession(body);
      drawHeader();
      navigate(safeNext(query.get('next')), { replace: true });
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof Error ? error.message : String(error);
    }
  });
  replace(view(), form);
  form.querySelector('input')!.focus();
}
