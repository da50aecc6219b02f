import { createHmac, randomBytes } from 'node:crypto';

// Webhook signing, the service side (imported by the server through signing.ts). The consumer
// side (webhook-signature.ts) must agree with this file byte for byte; it imports nothing but
// node:crypto so customers can copy it, which is why the two stay separate files.
//
//   Svc-Webhook-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]
//
// Each v1 is the lower-case hex HMAC-SHA256 of the signed payload `<t>.<raw body bytes>` (the
// ASCII digits of t, a period, then the body exactly as sent; never re-serialised JSON).
//
// The HMAC key is the secret string as a whole, `whsec_` prefix included, as its UTF-8 bytes.
// The base64url part is NOT decoded: one rule a consumer in any language gets right by passing
// the string it was given straight to its HMAC function.
//
// During a rotation the caller passes both secrets (current first), so every delivery carries one
// v1 per active secret and a consumer holding either one verifies.

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
// Consumers reject a t of more than 12 digits as malformed; refuse to sign one they cannot read.
const MAX_TIMESTAMP_S = 999_999_999_999;

export function signatureHeader(timestampS: number, body: Buffer, secrets: readonly string[]): string {
  if (!Number.isSafeInteger(timestampS) || timestampS < 0 || timestampS > MAX_TIMESTAMP_S) {
    throw new RangeError(`webhook timestamp must be whole Unix seconds of 1-12 digits, got ${timestampS}`);
  }
  if (secrets.length === 0) throw new Error('at least one webhook secret is required to sign');
  // An empty key is one anybody can sign with; consumers ignore it, so signing with it is a bug.
  if (secrets.some((secret) => secret.length === 0)) throw new Error('webhook secrets must not be empty');

  const t = String(timestampS);
  const entries = secrets.map((secret) => `v1=${hmacHex(secret, t, body)}`);
  return [`t=${t}`, ...entries].join(',');
}

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
}

function hmacHex(secret: string, t: string, body: Buffer): string {
  // Two updates rather than a concatenation: the body is never copied or decoded.
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.`, 'ascii').update(body).digest('hex');
}
