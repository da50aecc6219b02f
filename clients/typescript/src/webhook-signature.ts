/**
 * Verifying webhook deliveries, the consumer side.
 *
 * Self-contained: this file imports nothing but `node:crypto`, so it can be copied into any
 * Node.js (>= 18) project as it is.
 *
 * ## What a delivery carries
 *
 *   Svc-Webhook-Signature: t=1700000000,v1=5257a869...,v1=9f3c...
 *   Svc-Webhook-Timestamp: 1700000000        (the same t)
 *   Svc-Webhook-Id:        <envelope id>
 *
 * Each `v1` is the lower-case hex HMAC-SHA256 of the signed payload: the ASCII digits of `t`, a
 * period, then the raw body bytes. The HMAC key is your endpoint secret string as a whole,
 * `whsec_` prefix included, as UTF-8 bytes; do not base64-decode it. There is one `v1` per active
 * secret: after a rotation both the old and the new secret sign every delivery until the old one's
 * `previous_secret_valid_until`, so hold both during the overlap and either one verifies.
 *
 * A delivery verifies when the header is well formed, `t` is within the tolerance of now (300 s by
 * default, either direction), and some secret you hold matches some `v1` entry.
 *
 * ## Pass the exact bytes you received
 *
 * The signature covers the body bytes as sent. Verify before parsing, over the raw body: JSON
 * that has been parsed and re-serialised (or a body re-encoded by middleware) will not verify.
 * A string body is taken to be the raw text and hashed as UTF-8; only pass a string if it is
 * exactly the received bytes decoded as UTF-8. A Buffer / Uint8Array is always the safer choice.
 *
 * ## Example: a Node http handler
 *
 * ```ts
 * import { createServer } from 'node:http';
 * import { verifyWebhookSignature } from '@svc-controlplane/client/webhooks';
 *
 * // During a rotation: [process.env.WEBHOOK_SECRET_NEW, process.env.WEBHOOK_SECRET_OLD].
 * const secrets = [process.env.WEBHOOK_SECRET!];
 *
 * createServer((req, res) => {
 *   const chunks: Buffer[] = [];
 *   req.on('data', (chunk: Buffer) => chunks.push(chunk));
 *   req.on('end', () => {
 *     const rawBody = Buffer.concat(chunks); // the exact bytes, before any JSON.parse
 *     const header = req.headers['svc-webhook-signature'];
 *     const result = verifyWebhookSignature(rawBody, typeof header === 'string' ? header : undefined, secrets);
 *     if (!result.ok) {
 *       console.warn('webhook rejected:', result.reason); // log the reason; do not echo it back
 *       res.writeHead(400).end();
 *       return;
 *     }
 *     const event = JSON.parse(rawBody.toString('utf8'));
 *     // ... deduplicate on the Svc-Webhook-Id header, then handle the event ...
 *     res.writeHead(204).end();
 *   });
 * }).listen(8080);
 * ```
 *
 * ## Order of the checks
 *
 * 1. `malformed_header`: no header, no `t`, a second `t`, `t` not 1-12 digits, or no `v1` entry.
 * 2. `timestamp_outside_tolerance`: |now - t| > toleranceS.
 * 3. `no_matching_signature`: no held secret matches any `v1` (also when no secret is held).
 *
 * The tolerance is checked before the signatures. Checking signatures first would answer "this
 * stale delivery is authentic" for captured or guessed material long after it expired, and would
 * spend HMACs on requests that are rejected anyway; the order used here tells a caller nothing
 * it did not send itself (t and the public tolerance). Either way, do not return the reason to
 * the sender.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** Largest accepted |now - t| in seconds, either direction. Default 300. */
  toleranceS?: number;
  /** Current time in milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
}

export type WebhookVerification =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'malformed_header' | 'timestamp_outside_tolerance' | 'no_matching_signature' };

const DEFAULT_TOLERANCE_S = 300;

const TIMESTAMP = /^[0-9]{1,12}$/;
// A v1 value that is not exactly this never matches; uppercase hex is not accepted.
const V1 = /^[0-9a-f]{64}$/;
// Optional whitespace around entries, as HTTP allows around list elements.
const ENTRY_PADDING = /^[ \t]+|[ \t]+$/g;

/**
 * Parses `t=<digits>,v1=<hex>[,v1=<hex>...]`. Returns undefined when the header is malformed:
 * no `t`, more than one `t`, `t` not 1-12 digits, or no `v1` entry. Unknown keys (v0, v2, ...) and
 * entries without `=` are ignored. v1 values are returned as sent, valid or not.
 */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | undefined {
  const parsed = parse(header);
  return parsed && { timestamp: Number(parsed.t), signatures: parsed.signatures };
}

/**
 * Verifies one delivery. Never throws on anything a sender controls (body bytes, header); throws
 * only on mistakes in the calling code: a RangeError for an invalid `toleranceS`, a TypeError
 * when `rawBody` is not a string or bytes (for example an already parsed JSON object).
 *
 * @param rawBody the body exactly as received; a string is hashed as UTF-8.
 * @param signatureHeader the Svc-Webhook-Signature header value as a framework gives it: a
 *   string, undefined when absent, or an array when the header came more than once (malformed).
 * @param secrets the endpoint secret, or both secrets during a rotation. Empty strings are
 *   ignored (an unset environment variable must not become a key anybody can sign with).
 */
export function verifyWebhookSignature(
  rawBody: Uint8Array | string,
  signatureHeader: string | readonly string[] | null | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): WebhookVerification {
  const toleranceS = options.toleranceS ?? DEFAULT_TOLERANCE_S;
  if (typeof toleranceS !== 'number' || !Number.isFinite(toleranceS) || toleranceS < 0) {
    throw new RangeError(`toleranceS must be a finite number of seconds >= 0, got ${String(toleranceS)}`);
  }
  // The usual mistake is passing the object a JSON body parser produced; say so rather than fail
  // every delivery as no_matching_signature.
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('rawBody must be the raw body as received (Buffer, Uint8Array or string), not a parsed object');
  }

  // A header sent twice (an array) is ambiguous, so malformed, like an absent one.
  const parsed = typeof signatureHeader === 'string' ? parse(signatureHeader) : undefined;
  if (!parsed) return { ok: false, reason: 'malformed_header' };
  const timestamp = Number(parsed.t);

  // Written as "not within" so a NaN from a broken clock fails closed instead of passing.
  const nowMs = (options.now ?? Date.now)();
  if (!(Math.abs(nowMs - timestamp * 1000) <= toleranceS * 1000)) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const candidates = parsed.signatures.filter((v) => V1.test(v)).map((v) => Buffer.from(v, 'hex'));
  let matched = false;
  for (const secret of heldSecrets(secrets)) {
    // Signed over the t text exactly as sent, so the payload is what the sender signed.
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${parsed.t}.`, 'ascii').update(body).digest();
    for (const candidate of candidates) {
      // Every pair is compared, with no early exit: the time taken does not say which secret or
      // entry matched. Both buffers are 32 bytes, as timingSafeEqual requires.
      matched = timingSafeEqual(expected, candidate) || matched;
    }
  }
  return matched ? { ok: true, timestamp } : { ok: false, reason: 'no_matching_signature' };
}

function parse(header: string): { t: string; signatures: string[] } | undefined {
  if (typeof header !== 'string') return undefined;
  let t: string | undefined;
  let tEntries = 0;
  const signatures: string[] = [];
  for (const entry of header.split(',')) {
    const trimmed = entry.replace(ENTRY_PADDING, '');
    const eq = trimmed.indexOf('=');
    if (eq < 0) continue;
    const key = trimmed.slice(0, eq);
    const value = trimmed.slice(eq + 1);
    if (key === 't') {
      tEntries++;
      t = value;
    } else if (key === 'v1') {
      signatures.push(value);
    }
  }
  // Two t entries (e.g. the header sent twice and joined by the framework) are ambiguous.
  if (tEntries !== 1 || t === undefined || !TIMESTAMP.test(t) || signatures.length === 0) return undefined;
  return { t, signatures };
}

function heldSecrets(secrets: string | readonly string[]): string[] {
  const list: readonly unknown[] = typeof secrets === 'string' ? [secrets] : Array.isArray(secrets) ? secrets : [];
  return list.filter((s): s is string => typeof s === 'string' && s.length > 0);
}
