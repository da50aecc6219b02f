import { randomUUID } from 'node:crypto';
import { SvcApiError, SvcConnectionError, SvcResponseError, type ConnectionFailure } from './errors.ts';
import type { ProblemDetails } from './generated/api-types.ts';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, mayRepeat, retryAfterMs, retryDelayMs, type RetryPolicy } from './retry.ts';
import { isKeySecret, signRequest } from './signing.ts';

export interface ClientOptions {
  /** Where the API is, e.g. `https://svc.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** The key id (`svc_live_…` or `svc_test_…`). */
  keyId: string;
  /** The key secret as issued: base64url text of 32 bytes. Never logged, never sent. */
  secret: string;
  retry?: Partial<RetryPolicy>;
  /**
   * Also retry GET requests (429, 500, 502, 503, 504, transport failures) though they carry no
   * Idempotency-Key. Off by default: the service's retry guidance retries keyed requests only.
   */
  retryReads?: boolean;
  /** Per attempt, in milliseconds; 80 s by default, 0 (or Infinity) for none. */
  timeoutMs?: number;
  /** Sent as User-Agent after the SDK's own name. */
  appInfo?: string;
  /** Called before every retry with what failed and how long the SDK will wait. */
  onRetry?: (retry: RetryNotice) => void;
  /** For tests and unusual runtimes: the fetch, sleep, randomness and clock the SDK uses. */
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Per attempt, in milliseconds; overrides the client's. */
  timeoutMs?: number;
  /**
   * Retry this call on 429, 5xx and transport failures although it carries no Idempotency-Key.
   * Only for calls whose repetition is harmless: reads, or staging an import chunk (the same
   * bytes replace the same chunk). Never set it on a write that creates something.
   */
  safeToRepeat?: boolean;
}

export interface IngestOptions extends RequestOptions {
  /** 1-255 characters; the SDK makes one (a UUID) when you give none, and keeps it across retries. */
  idempotencyKey?: string;
  /** Recorded on the inbox row and every log line of the service. */
  correlationId?: string;
}

export interface RetryNotice {
  method: string;
  path: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  /** `HTTP 503`, or the transport failure. */
  reason: string;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** What the SDK knows about the HTTP exchange behind a result. */
export interface ResponseMeta {
  status: number;
  headers: Headers;
  /** Attempts made, retries included. */
  attempts: number;
  /** The Idempotency-Key sent, when one was. */
  idempotencyKey: string | undefined;
  /** The service returned the stored response of an earlier identical request. */
  idempotentReplayed: boolean;
  rateLimit: RateLimitState | undefined;
}

export type WithResponse<T> = T & { readonly lastResponse: ResponseMeta };

type QueryValue = string | number | boolean | undefined | null | ReadonlyArray<string | number>;
export type Query = { [name: string]: QueryValue } | object;

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Already encoded (see `pathOf`). */
  path: string;
  query?: Query | undefined;
  /** Serialised once; the bytes hashed are the bytes sent. */
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  accept?: string;
  /** Statuses that are results, not errors. */
  expect: readonly number[];
  idempotencyKey?: string | undefined;
  correlationId?: string | undefined;
  options?: RequestOptions | undefined;
}

const SDK_NAME = 'svc-client-typescript/0.1.0';
const DEFAULT_TIMEOUT_MS = 80_000;
// The longest delay a timer takes as given: past it, setTimeout fires after 1 ms (with a warning).
const MAX_TIMER_MS = 2_147_483_647;

/** Signs, sends and retries requests; the resources build on it. */
export class HttpClient {
  private readonly base: URL;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly userAgent: string;
  // The options without the secret, which is kept where neither util.inspect, JSON.stringify nor
  // a logger walking the client's properties can reach it.
  private readonly options: Omit<ClientOptions, 'secret'>;
  readonly #secret: string;

  constructor(options: ClientOptions) {
    const { secret, ...rest } = options;
    this.options = rest;
    this.#secret = secret;
    this.base = new URL(options.baseUrl);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new TypeError('baseUrl must be an http or https URL');
    if (!options.keyId || !options.secret) throw new TypeError('keyId and secret are required');
    // Refused by its shape alone (the value is never echoed).
    if (!isKeySecret(options.secret)) throw new TypeError('secret must be the key secret as issued: 43 base64url characters (32 bytes)');
    this.policy = retryPolicyOf(options.retry);
    timeoutOf(options.timeoutMs, 'timeoutMs');
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? sleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.userAgent = options.appInfo ? `${SDK_NAME} ${options.appInfo}` : SDK_NAME;
  }

  /** A JSON result with the exchange's metadata attached as `lastResponse` (not enumerable). */
  async json<T>(call: Call): Promise<WithResponse<T>> {
    const { response, meta, text } = await this.send(call, true);
    let body: unknown;
    try {
      body = JSON.parse(text!);
    } catch {
      throw new SvcResponseError(`${call.method} ${call.path}: the ${response.status} response is not JSON`, response.status);
    }
    if (body === null || typeof body !== 'object') throw new SvcResponseError(`${call.method} ${call.path}: the ${response.status} response is not a JSON object`, response.status);
    Object.defineProperty(body, 'lastResponse', { value: meta, enumerable: false });
    return body as WithResponse<T>;
  }

  /** A result with no body of interest (204). */
  async empty(call: Call): Promise<ResponseMeta> {
    return (await this.send(call, true)).meta;
  }

  /** A text result (a CSV download), read whole within the attempt and its timeout. */
  async text(call: Call): Promise<string> {
    return (await this.send(call, true)).text!;
  }

  /**
   * The response itself, its body unread: for downloads the caller streams. The timeout bounds
   * the wait for the headers only; the caller's signal still cancels the body.
   */
  async raw(call: Call): Promise<{ response: Response; meta: ResponseMeta }> {
    const { response, meta } = await this.send(call, false);
    return { response, meta };
  }

  private async send(call: Call, readBody: boolean): Promise<{ response: Response; meta: ResponseMeta; text?: string }> {
    const url = this.urlOf(call.path, call.query);
    const target = `${url.pathname}${url.search}`;
    const body = call.json !== undefined ? Buffer.from(JSON.stringify(call.json), 'utf8') : call.body;
    const contentType = call.json !== undefined ? 'application/json' : call.contentType;
    const repeatable = mayRepeat({
      method: call.method,
      idempotencyKey: call.idempotencyKey,
      safeToRepeat: call.options?.safeToRepeat === true || (call.method === 'GET' && this.options.retryReads === true),
    });
    const signal = call.options?.signal;
    const timeoutMs = timeoutOf(call.options?.timeoutMs, 'options.timeoutMs') ?? timeoutOf(this.options.timeoutMs, 'timeoutMs') ?? DEFAULT_TIMEOUT_MS;
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const headers: Record<string, string> = {
        // A fresh timestamp and nonce for every attempt, retries included.
        ...signRequest({ keyId: this.options.keyId, secret: this.#secret, method: call.method, target, body: body ?? '', timestamp: Math.floor(this.now() / 1000) }),
        'user-agent': this.userAgent,
        accept: call.accept ?? 'application/json',
      };
      if (body !== undefined) headers['content-type'] = contentType ?? 'application/octet-stream';
      if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
      if (call.correlationId !== undefined) headers['svc-correlation-id'] = call.correlationId;
      const abort = attemptAbort(signal, timeoutMs);

      let failure: { reason: string; retryAfter?: number | undefined; error: () => Error };
      try {
        const response = await this.fetchImpl(url, {
          method: call.method,
          headers,
          ...(body !== undefined ? { body } : {}),
          ...(abort.signal ? { signal: abort.signal } : {}),
          redirect: 'manual',
        });
        // The body is read inside the attempt: a connection cut mid-body is a transport failure.
        const text = readBody || !call.expect.includes(response.status) ? await response.text() : undefined;
        const meta = metaOf(response, attempt, call.idempotencyKey);
        // A body left unread (a download the caller streams at its own pace) keeps the caller's
        // cancellation; the attempt's timeout covered its wait for the headers.
        if (text !== undefined) abort.release();
        else abort.stopTimer();
        if (call.expect.includes(response.status)) return { response, meta, ...(text !== undefined ? { text } : {}) };
        const retryAfter = retryAfterMs(response.headers.get('retry-after'), this.now());
        failure = {
          reason: `HTTP ${response.status}`,
          retryAfter,
          error: () => apiError(call, response, text ?? '', retryAfter, attempt),
        };
        if (!isRetryableStatus(response.status)) throw failure.error();
      } catch (error) {
        abort.release();
        if (error instanceof SvcApiError) throw error;
        // The caller's own cancellation is theirs, not a failure to retry.
        if (signal?.aborted) throw signal.reason;
        const kind = connectionFailure(error);
        const message = `${call.method} ${call.path}: ${describeFailure(kind, error, url)}`;
        failure = {
          reason: message,
          error: () => new SvcConnectionError({ failure: kind, message, attempts: attempt, idempotencyKey: call.idempotencyKey, cause: error }),
        };
      }
      if (!repeatable || attempt > this.policy.maxRetries) throw failure.error();
      const delayMs = retryDelayMs(this.policy, attempt, failure.retryAfter, this.random);
      if (delayMs === undefined) throw failure.error();
      this.options.onRetry?.({ method: call.method, path: call.path, attempt, delayMs, reason: failure.reason });
      await this.sleep(delayMs, signal);
    }
  }

  private urlOf(path: string, query: Query | undefined): URL {
    const prefix = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(`${prefix}${path}`, this.base.origin);
    const search = queryString(query);
    if (search) url.search = search;
    return url;
  }
}

// The policy with the caller's settings over the defaults; a setting given as undefined keeps its
// default (a spread would let it erase it), and a setting that is not a finite number >= 0 is a
// mistake in the calling code.
function retryPolicyOf(given: Partial<RetryPolicy> | undefined): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY };
  for (const [name, value] of Object.entries(given ?? {}) as Array<[keyof RetryPolicy, number | undefined]>) {
    if (value === undefined) continue;
    if (!(name in DEFAULT_RETRY_POLICY)) throw new TypeError(`unknown retry setting ${name}`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new RangeError(`retry.${name} must be a finite number >= 0, got ${String(value)}`);
    if (name !== 'maxRetries' && value > MAX_TIMER_MS) throw new RangeError(`retry.${name} must be at most ${MAX_TIMER_MS} ms, got ${value}`);
    policy[name] = value;
  }
  return policy;
}

// A per-attempt timeout as given: 0 or Infinity for none, else a number of milliseconds a timer
// can wait (NaN, a negative or a larger one is a mistake in the calling code: every call would
// otherwise time out after 1 ms and be retried as a network failure).
function timeoutOf(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (value === Number.POSITIVE_INFINITY) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be 0 (none) or a number of milliseconds up to ${MAX_TIMER_MS}, got ${String(value)}`);
  }
  return value;
}

// One attempt's cancellation: the caller's signal, and the attempt's timeout. Made per attempt and
// released when the attempt ends, so a long-lived caller signal collects no listeners (as
// AbortSignal.any would leave behind) and no timer outlives its attempt.
function attemptAbort(caller: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal | undefined; release: () => void; stopTimer: () => void } {
  if (timeoutMs <= 0) return { signal: caller, release: () => {}, stopTimer: () => {} };
  const controller = new AbortController();
  const onAbort = () => controller.abort(caller!.reason);
  const stopTimer = () => clearTimeout(timer);
  const release = () => {
    stopTimer();
    caller?.removeEventListener('abort', onAbort);
  };
  const timer = setTimeout(() => {
    release();
    controller.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  // The request in flight keeps the process alive, not its timer.
  timer.unref();
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, release, stopTimer };
}

/** A path from literal parts and values; each value becomes exactly one encoded segment. */
export function pathOf(strings: TemplateStringsArray, ...values: Array<string | number>): string {
  return strings.reduce((path, part, i) => path + part + (i < values.length ? segment(values[i]!) : ''), '');
}

function segment(value: string | number): string {
  const text = String(value);
  // URL parsers treat these as dot-segments (even encoded), so they cannot name a resource.
  if (text === '' || text === '.' || text === '..') throw new TypeError(`"${text}" cannot be used as a path segment`);
  return encodeURIComponent(text);
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(query as Record<string, QueryValue>)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(item))}`);
  }
  return pairs.join('&');
}

/** An Idempotency-Key for an ingest call: the caller's, or a new one kept across retries. */
export function idempotencyKeyFor(options: IngestOptions | undefined): string {
  return options?.idempotencyKey ?? randomUUID();
}

function metaOf(response: Response, attempts: number, idempotencyKey: string | undefined): ResponseMeta {
  const limit = response.headers.get('svc-ratelimit-limit');
  const remaining = response.headers.get('svc-ratelimit-remaining');
  const reset = response.headers.get('svc-ratelimit-reset');
  return {
    status: response.status,
    headers: response.headers,
    attempts,
    idempotencyKey,
    idempotentReplayed: response.headers.get('idempotent-replayed') === 'true',
    rateLimit: limit !== null && remaining !== null && reset !== null ? { limit: Number(limit), remaining: Number(remaining), resetSeconds: Number(reset) } : undefined,
  };
}

function apiError(call: Call, response: Response, text: string, retryAfter: number | undefined, attempts: number): SvcApiError {
  let problem: ProblemDetails | undefined;
  if (/json/i.test(response.headers.get('content-type') ?? '')) {
    try {
      const parsed = JSON.parse(text) as Partial<ProblemDetails>;
      if (parsed && typeof parsed.code === 'string' && typeof parsed.status === 'number') problem = { ...parsed, errors: Array.isArray(parsed.errors) ? parsed.errors : [] } as ProblemDetails;
    } catch {
      // not JSON after all: kept as an excerpt below
    }
  }
  return new SvcApiError({
    status: response.status,
    problem,
    bodyExcerpt: problem ? '' : text.replace(/\s+/g, ' ').trim().slice(0, 200),
    headers: response.headers,
    retryAfterMs: retryAfter,
    attempts,
    idempotencyKey: call.idempotencyKey,
    method: call.method,
    path: call.path,
  });
}

function connectionFailure(error: unknown): ConnectionFailure {
  if ((error as Error)?.name === 'TimeoutError') return 'timeout';
  const code = (error as { cause?: { code?: string } })?.cause?.code ?? (error as { code?: string })?.code;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  return 'other';
}

function describeFailure(kind: ConnectionFailure, error: unknown, url: URL): string {
  if (kind === 'timeout') return `no response from ${url.origin} in time`;
  const cause = (error as { cause?: { message?: string } })?.cause?.message ?? (error as Error)?.message ?? String(error);
  return `cannot reach ${url.origin} (${kind}): ${cause}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
