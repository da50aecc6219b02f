import { currentSession, request, setSession } from './api.ts';
import { h, replace } from './dom.ts';
import { navigate } from './router.ts';

const top = document.getElementById('top')!;

export function drawHeader(): void {
  const s = currentSession();
  replace(
    top,
    h('nav', { class: 'bar', 'aria-label': 'main' }, h('a', { href: '/console/cases', class: 'brand' }, 'svc console'), s && !s.user.must_change_password ? [h('a', { href: '/console/cases' }, 'Cases'), h('a', { href: '/console/alerts' }, 'Alerts'), h('a', { href: '/console/paths' }, 'Paths'), h('a', { href: '/console/breaks' }, 'Breaks')] : null),
    s
      ? h(
          'div',
          { class: 'who' },
          h('span', { 'data-testid': 'who' }, `${s.user.email} · ${s.user.role} · ${s.user.tenant}`),
          h(
            'button',
            {
              type: 'button',
              class: 'link',
              onclick: async () => {
                try {
                  await request('DELETE', '/session');
                } finally {
                  setSession(null);
                  drawHeader();
                  navigate('/console/login');
                }
              },
            },
            'Log out',
          ),
        )
      : null,
  );
}

