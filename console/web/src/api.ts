// The console API client: same-origin fetch with the session cookie, the CSRF token on every
// state-changing request, problem+json turned into ApiError.
interface SessionUser {
  id: string;
  tenant: string;
  email: string;
  role: string;
  must_change_password: boolean;
}
export interface SessionBody {
  user: SessionUser;
  csrf_token: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problem: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let session: SessionBody | null = null;
export const currentSession = () => session;
export const setSession = (next: SessionBody | null) => {
  session = next;
};

// Called when the server says the session has ended or the password must be changed first.
let onAuthProblem: (error: ApiError) => void = () => {};
export const handleAuthProblems = (handler: (error: ApiError) => void) => {
  onAuthProblem = handler;
};

// Called when the cookie turns out to hold another user's session (a login in another tab): what
// this tab shows is someone else's, so it starts again.
let onSessionChanged: () => void = () => location.reload();
export const handleSessionChange = (handler: () => void) => {
  onSessionChanged = handler;
};

// After a refused CSRF token: the session the cookie holds now, read again. True when it is still
// this tab's user (logged in again elsewhere, so with a new token): the request can be sent again.
async function refreshSession(): Promise<boolean> {
  const before = session?.user.id;
  let fresh: SessionBody;
  try {
    fresh = await request<SessionBody>('GET', '/session');
  } catch {
    return false;
  }
  setSession(fresh);
  if (fresh.user.id === before) return true;
  onSessionChanged();
  return false;
}

export async function request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session) headers['x-csrf-token'] = session.csrf_token;
  const res = await fetch(`/console/v1${path}`, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const problem = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    const member = (name: string) => (typeof problem[name] === 'string' ? problem[name] : undefined);
    const error = new ApiError(res.status, member('code') ?? `http_${res.status}`, member('detail') ?? member('title') ?? `${res.status} ${res.statusText}`, problem);
    if (error.code === 'svc:console/unauthenticated' || error.code === 'svc:console/password_change_required') onAuthProblem(error);
    // The tab's token is of a session that ended while the cookie moved on to a new one: once, with
    // the new session's token, rather than losing what the user just typed.
    if (error.code === 'svc:console/csrf_failed' && method !== 'GET' && !retried && (await refreshSession())) return request<T>(method, path, body, true);
    throw error;
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown) => request<T>('POST', path, body);
export const enc = encodeURIComponent;
