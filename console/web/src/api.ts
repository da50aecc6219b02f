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

export async function request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
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
    throw error;
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown) => request<T>('POST', path, body);
export const enc = encodeURIComponent;
