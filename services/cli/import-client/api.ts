// A small client of the public API for the CLI: every request signed (SVC-HMAC-SHA256 over the
// exact target and bytes sent, a fresh nonce per attempt), retried on 429, 5xx and transport
// failures with exponential backoff and full jitter, never sooner than a Retry-After says.
// Problems (application/problem+json) become ApiProblemError.
import { signRequest } from '../../../platform/crypto/request-signing.ts';

export interface Credentials {
  keyId: string;
  secret: string;
}

/**
 * When a failed attempt may be tried again:
 * - 'idempotent': the request can be repeated safely (GET, PUT of a chunk, the dry-run): 429, any
 *   5xx, and transport failures.
 * - 'unprocessed': only when the server certainly did not act on it (429: refused before any
 *   work; a refused connection), for requests that change state (create, submit, cancel). A 503
 *   may come from a proxy after the service acted, and these writes take no Idempotency-Key.
 */
export type RetryMode = 'idempotent' | 'unprocessed';

export interface RequestOptions {
  body?: Buffer | string;
  contentType?: string;
  retry: RetryMode;
  /** Per attempt; default 120 s. 0 for none (a download whose body is streamed after). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After honoured (a longer one is waited this long). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 120_000 };

export interface FieldProblem {
  path: string;
  code?: string;
  message: string;
}

export class ApiProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldProblem[],
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ApiProblemError';
  }

  /** `code: detail`, then one line per field error with its path. */
  describe(): string[] {
    return [`${this.code}: ${this.detail}`, ...this.errors.map((e) => `  ${e.path || '(body)'}: ${e.message}${e.code && e.code !== this.code ? ` (${e.code})` : ''}`)];
  }
}

export class TransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export interface RetryNotice {
  method: string;
  path: string;
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface ApiClientOptions {
  baseUrl: string;
  credentials: Credentials;
  retry?: Partial<RetryPolicy>;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  onRetry?: (notice: RetryNotice) => void;
  userAgent?: string;
}

export class ApiClient {
  readonly baseUrl: URL;
  private readonly credentials: Credentials;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly onRetry: ((notice: RetryNotice) => void) | undefined;
  private readonly userAgent: string;

  constructor(options: ApiClientOptions) {
    this.baseUrl = new URL(options.baseUrl);
    if (this.baseUrl.protocol !== 'http:' && this.baseUrl.protocol !== 'https:') throw new TypeError('the URL must be http or https');
    this.credentials = options.credentials;
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? sleep;
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry;
    this.userAgent = options.userAgent ?? 'svc-cli';
  }

  /** The URL of a path (with its query) under the base URL. */
  url(path: string): URL {
    const prefix = this.baseUrl.pathname.replace(/\/+$/, '');
    return new URL(`${prefix}${path}`, this.baseUrl.origin);
  }

  /**
   * Sends a signed request, retrying as `retry` allows; resolves with a successful response (the
   * caller reads its body) or rejects with ApiProblemError / TransportError.
   */
  async request(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = this.url(path);
    const target = `${url.pathname}${url.search}`;
    const body = options.body === undefined ? undefined : typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      const headers: Record<string, string> = {
        ...signRequest({ keyId: this.credentials.keyId, secret: this.credentials.secret, method, target, body: body ?? '' }),
        'user-agent': this.userAgent,
        accept: 'application/json, text/csv, application/problem+json',
      };
      if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/octet-stream';
      const timeoutMs = options.timeoutMs ?? 120_000;
      const signals = [options.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => s !== undefined);
      let response: Response;
      try {
        response = await this.fetchImpl(url, { method, headers, ...(body !== undefined ? { body } : {}), ...(signals.length ? { signal: AbortSignal.any(signals) } : {}), redirect: 'manual' });
      } catch (error) {
        options.signal?.throwIfAborted();
        const failure = transportFailure(error, url);
        const retryable = options.retry === 'idempotent' || failure.refused;
        if (!retryable || attempt >= this.policy.attempts) throw new TransportError(failure.message, { cause: error });
        await this.pause(method, path, attempt, undefined, failure.message, options.signal);
        continue;
      }
      if (response.ok) return response;
      const retryable = response.status === 429 || (options.retry === 'idempotent' && response.status >= 500);
      if (retryable && attempt < this.policy.attempts) {
        await response.body?.cancel().catch(() => {});
        await this.pause(method, path, attempt, retryAfterMs(response.headers.get('retry-after')), `HTTP ${response.status}`, options.signal);
        continue;
      }
      throw await problemOf(response);
    }
  }

  /** A request whose successful response is JSON. */
  async json<T>(method: string, path: string, options: RequestOptions & { json?: unknown }): Promise<T> {
    const { json, ...rest } = options;
    const response = await this.request(method, path, json === undefined ? rest : { ...rest, body: JSON.stringify(json), contentType: 'application/json' });
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new TransportError(`${method} ${path}: the response is not JSON (HTTP ${response.status})`);
    }
  }

  /** Exponential backoff with full jitter, never shorter than a Retry-After. */
  backoffMs(attempt: number, retryAfter: number | undefined): number {
    const ceiling = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (attempt - 1));
    const jitter = Math.floor(this.random() * ceiling);
    return retryAfter === undefined ? jitter : Math.max(Math.min(retryAfter, this.policy.maxRetryAfterMs), jitter);
  }

  private async pause(method: string, path: string, attempt: number, retryAfter: number | undefined, reason: string, signal?: AbortSignal): Promise<void> {
    const delayMs = this.backoffMs(attempt, retryAfter);
    this.onRetry?.({ method, path, attempt, delayMs, reason });
    await this.sleep(delayMs, signal);
  }
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

async function problemOf(response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  const type = response.headers.get('content-type') ?? '';
  if (/json/i.test(type)) {
    try {
      const body = JSON.parse(text) as { code?: unknown; detail?: unknown; title?: unknown; errors?: unknown };
      const errors = Array.isArray(body.errors)
        ? body.errors.map((e: { path?: unknown; code?: unknown; message?: unknown }) => ({
            path: typeof e.path === 'string' ? e.path : '',
            ...(typeof e.code === 'string' ? { code: e.code } : {}),
            message: typeof e.message === 'string' ? e.message : String(e.message),
          }))
        : [];
      const code = typeof body.code === 'string' ? body.code : `HTTP ${response.status}`;
      const detail = typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : response.statusText;
      return new ApiProblemError(response.status, code, detail, errors);
    } catch {
      // not JSON after all: reported below
    }
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return new ApiProblemError(response.status, `HTTP ${response.status}`, snippet || response.statusText || 'no detail', []);
}

function transportFailure(error: unknown, url: URL): { message: string; refused: boolean } {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  if ((error as Error).name === 'TimeoutError') return { message: `${url.origin}: no response in time`, refused: false };
  const detail = cause?.message ?? (error as Error).message ?? String(error);
  return { message: `cannot reach ${url.origin}: ${detail}`, refused: code === 'ECONNREFUSED' };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
