import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, currentSession, handleSessionChange, post, setSession, type SessionBody } from './api.ts';

const user = (id: string) => ({ id, tenant: 'acme', email: `${id}@example.com`, role: 'analyst', must_change_password: false });
const sessionOf = (id: string, token: string): SessionBody => ({ user: user(id), csrf_token: token });
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const csrfRefused = () => json(403, { code: 'svc:console/csrf_failed', detail: 'send the session\'s CSRF token in X-CSRF-Token' });

// The server as a tab sees it after a login elsewhere: the cookie holds a new session, whose token
// only a fresh read of /session gives.
function server(sessionNow: SessionBody) {
  const sent: Array<{ method: string; url: string; token: string | undefined }> = [];
  const fetch = vi.fn(async (url: string, init: RequestInit) => {
    const token = (init.headers as Record<string, string>)['x-csrf-token'];
    sent.push({ method: init.method ?? 'GET', url, token });
    if (url === '/console/v1/session') return json(200, sessionNow);
    return token === sessionNow.csrf_token ? json(201, { ok: true }) : csrfRefused();
  });
  return { fetch, sent };
}

describe('the console API client after a login in another tab', () => {
  beforeEach(() => setSession(sessionOf('ana', 'old-token')));
  afterEach(() => vi.unstubAllGlobals());

  it('sends a refused write again once, with the token of the session the cookie now holds', async () => {
    const { fetch, sent } = server(sessionOf('ana', 'new-token'));
    vi.stubGlobal('fetch', fetch);
    expect(await post('/cases/x/notes', { body: 'typed text' })).toEqual({ ok: true });
    expect(sent.map((s) => [s.method, s.url, s.token])).toEqual([
      ['POST', '/console/v1/cases/x/notes', 'old-token'],
      ['GET', '/console/v1/session', undefined],
      ['POST', '/console/v1/cases/x/notes', 'new-token'],
    ]);
    expect(currentSession()?.csrf_token).toBe('new-token');
  });

  it('does not act as another user: the tab starts again instead', async () => {
    const { fetch, sent } = server(sessionOf('ben', 'ben-token'));
    vi.stubGlobal('fetch', fetch);
    const changed = vi.fn();
    handleSessionChange(changed);
    await expect(post('/cases/x/notes', { body: 'typed text' })).rejects.toBeInstanceOf(ApiError);
    expect(sent.filter((s) => s.method === 'POST')).toHaveLength(1);
    expect(changed).toHaveBeenCalledOnce();
  });

  it('tries once only', async () => {
    vi.stubGlobal('fetch', vi.fn(async (url: string) => (url === '/console/v1/session' ? json(200, sessionOf('ana', 'still-old')) : csrfRefused())));
    await expect(post('/cases/x/notes', { body: 'x' })).rejects.toMatchObject({ code: 'svc:console/csrf_failed' });
    expect(vi.mocked(fetch)).toHaveBeenCalledTimes(3);
  });
});
