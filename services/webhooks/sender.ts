// One HTTPS POST of a signed envelope. The destination is checked again when the connection is
// made (the lookup refuses any resolved address that is not public, and a literal address is
// checked before connecting), so a name re-pointed at a private address after registration is
// never reached. Redirects are never followed: a 3xx is a failed attempt. Only the first bytes of
// a response body are kept; a long body is cut off so a hostile endpoint cannot make the worker
// read or hold much. The result is a value, never an exception.
import https from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import { guardedLookup, literalHostRefusal, type DestinationPolicy } from './destination.ts';
import { parseRetryAfter } from './retry-schedule.ts';

export interface AttemptResult {
  ok: boolean;
  startedAt: Date;
  latencyMs: number;
  // null when no response came.
  responseStatus: number | null;
  error: string | null;
  responseExcerpt: string | null;
  retryAfterMs?: number;
}

export interface SenderOptions {
  policy: DestinationPolicy;
  timeoutMs: number;
  // Trusted in addition to the public roots (operator test mode).
  extraCaPem?: string;
  // Sockets kept per destination between attempts.
  maxSocketsPerOrigin: number;
}

const EXCERPT_BYTES = 512;
// Past this many body bytes the response is abandoned (and its socket with it).
const READ_LIMIT_BYTES = 64 * 1024;

export class WebhookSender {
  private readonly agent: https.Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: options.maxSocketsPerOrigin,
      // Idle sockets are closed before common server keep-alive timeouts (Node's is 5 s) end them
      // under a request.
      timeout: 4_000,
      // One TLS context made here, not a `ca` list: the agent would build a context per connection
      // from a list (milliseconds and a megabyte each) and join the list into its pool key on
      // every request.
      ...(options.extraCaPem ? { secureContext: createSecureContext({ ca: [...rootCertificates, options.extraCaPem] }) } : {}),
      lookup: guardedLookup(options.policy),
    });
  }

  close(): void {
    this.agent.destroy();
  }

  send(url: string, headers: Record<string, string>, body: Buffer, startedAt: Date): Promise<AttemptResult> {
    const began = performance.now();
    const elapsed = () => Math.round(performance.now() - began);
    const failure = (error: string, responseStatus: number | null = null, responseExcerpt: string | null = null, retryAfterMs?: number): AttemptResult => ({
      ok: false,
      startedAt,
      latencyMs: elapsed(),
      responseStatus,
      error,
      responseExcerpt,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });

    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve(failure('destination refused: not a URL'));
    }
    const literal = literalHostRefusal(target.hostname, this.options.policy);
    if (target.protocol !== 'https:') return Promise.resolve(failure('destination refused: not https'));
    if (literal) return Promise.resolve(failure(`destination refused: ${literal}`));

    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const request = https.request(target, {
        method: 'POST',
        agent: this.agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': 'svc-webhooks/1' },
      });
      // Set once the status is in: an endpoint that answered and then never finished its body
      // answered all the same (a 2xx is accepted), and is recorded with its status.
      let answered: (() => void) | undefined;
      const timer = setTimeout(() => {
        if (answered) answered();
        else settle(failure(`timed out after ${this.options.timeoutMs} ms`));
        request.destroy();
      }, this.options.timeoutMs);

      request.on('error', (error: NodeJS.ErrnoException) => settle(failure(describe(error))));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        let read = 0;
        const finish = () => {
          // Text as the log stores it: PostgreSQL text holds no NUL.
          const excerpt = chunks.length > 0 ? Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', '') : null;
          if (status >= 200 && status < 300) {
            settle({ ok: true, startedAt, latencyMs: elapsed(), responseStatus: status, error: null, responseExcerpt: excerpt });
          } else {
            const why = status >= 300 && status < 400 ? 'redirect not followed' : `answered ${status}`;
            settle(failure(why, status, excerpt, parseRetryAfter(header(response.headers['retry-after']), startedAt)));
          }
        };
        answered = finish;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (kept < EXCERPT_BYTES) {
            const part = chunk.subarray(0, EXCERPT_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (read > READ_LIMIT_BYTES) {
            finish();
            response.destroy();
          }
        });
        response.on('end', finish);
        response.on('error', () => finish());
        response.on('aborted', () => finish());
      });
      request.end(body);
    });
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

// A transport failure in words for the delivery log, without addresses or anything secret.
function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ESVC_DESTINATION_REFUSED':
      return `destination refused: ${error.message}`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name does not resolve';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || error.code === 'DEPTH_ZERO_SELF_SIGNED_CERT') {
        return `TLS failure (${error.code})`;
      }
      return error.code ? `transport failure (${error.code})` : 'transport failure';
  }
}
