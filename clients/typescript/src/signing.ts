import { createHash, createHmac, randomBytes } from 'node:crypto';

// SVC-HMAC-SHA256 request signing, used by the API to verify and by clients (the SDK, the test
// client, the benchmarks) to sign. The canonical string is eight lines joined by line feeds.
//
// This module is the one path by which the server imports the SDK (decision 0041): request
// signing here, and webhook signing, the producer side of what webhooks.ts verifies, re-exported
// below so both sides of each signature live in this package.
export { newWebhookSecret, signatureHeader } from './webhook-signing.ts';
export const SIGNING_SCHEME = 'SVC-HMAC-SHA256';

export const SIGNING_HEADERS = {
  keyId: 'svc-key-id',
  timestamp: 'svc-timestamp',
  nonce: 'svc-nonce',
  signature: 'svc-signature',
} as const;

const HEX = '0123456789ABCDEF';

function isUnreservedByte(b: number): boolean {
  return (
    (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) ||
    b === 0x2d || b === 0x2e || b === 0x5f || b === 0x7e
  );
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

// Line 3: a %XX that encodes an unreserved character is decoded, every other %XX is upper-cased;
// no dot-segment removal, no collapsing of slashes, malformed escapes stay as they are.
export function canonicalPath(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const byte = parseInt(hex, 16);
    return isUnreservedByte(byte) ? String.fromCharCode(byte) : `%${hex.toUpperCase()}`;
  });
}

// Form-decoding to bytes: plus is a space, %XX is its byte, a malformed escape stays literal.
function formDecode(text: string): Buffer {
  const source = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(source.length);
  let n = 0;
  for (let i = 0; i < source.length; i++) {
    const b = source[i]!;
    if (b === 0x2b) {
      out[n++] = 0x20;
    } else if (b === 0x25 && i + 2 < source.length && hexValue(source[i + 1]!) >= 0 && hexValue(source[i + 2]!) >= 0) {
      out[n++] = hexValue(source[i + 1]!) * 16 + hexValue(source[i + 2]!);
      i += 2;
    } else {
      out[n++] = b;
    }
  }
  return out.subarray(0, n);
}

// RFC 3986 encoding: everything but unreserved characters is %XX (so ! ' ( ) * are encoded too).
function rfc3986Encode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += isUnreservedByte(b) ? String.fromCharCode(b) : `%${HEX[b >> 4]}${HEX[b & 15]}`;
  return out;
}

// Line 4: pairs form-decoded, re-encoded with RFC 3986, sorted by key then value, all kept.
export function canonicalQuery(rawQuery: string): string {
  const pairs: Array<[string, string]> = [];
  for (const segment of rawQuery.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const key = eq < 0 ? segment : segment.slice(0, eq);
    const value = eq < 0 ? '' : segment.slice(eq + 1);
    pairs.push([rfc3986Encode(formDecode(key)), rfc3986Encode(formDecode(value))]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

// Splits a request target ("/v1/x?a=b") into its path and raw query; a fragment is never signed.
export function splitTarget(target: string): { path: string; query: string } {
  const hash = target.indexOf('#');
  const withoutFragment = hash < 0 ? target : target.slice(0, hash);
  const q = withoutFragment.indexOf('?');
  return q < 0 ? { path: withoutFragment, query: '' } : { path: withoutFragment.slice(0, q), query: withoutFragment.slice(q + 1) };
}

export function sha256Hex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export interface CanonicalRequest {
  method: string;
  target: string;
  bodySha256: string;
  timestamp: string;
  nonce: string;
  keyId: string;
}

export function canonicalString(request: CanonicalRequest): string {
  const { path, query } = splitTarget(request.target);
  return [
    SIGNING_SCHEME,
    request.method.toUpperCase(),
    canonicalPath(path),
    canonicalQuery(query),
    request.bodySha256,
    request.timestamp,
    request.nonce,
    request.keyId,
  ].join('\n');
}

export function signatureHex(secretBytes: Uint8Array, canonical: string): string {
  return createHmac('sha256', secretBytes).update(canonical, 'utf8').digest('hex');
}

/**
 * Whether the text has the shape of a key secret as issued: 32 bytes as base64url text (43
 * characters; one padding character tolerated). Decoding is lenient (it skips what is not
 * base64url), so a secret pasted with the key id in front or a line break behind would otherwise
 * sign every request wrongly.
 */
export function isKeySecret(text: string): boolean {
  return /^[A-Za-z0-9_-]{43}=?$/.test(text);
}

function decodeSecret(secret: string): Buffer {
  return Buffer.from(secret, 'base64url');
}

function newNonce(): string {
  return randomBytes(18).toString('base64url');
}

// The four signing headers for a request; the body must be the exact bytes that will be sent.
export function signRequest(options: {
  keyId: string;
  secret: string;
  method: string;
  target: string;
  body?: Uint8Array | string;
  timestamp?: number;
  nonce?: string;
}): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? newNonce();
  const canonical = canonicalString({
    method: options.method,
    target: options.target,
    bodySha256: sha256Hex(options.body ?? ''),
    timestamp,
    nonce,
    keyId: options.keyId,
  });
  return {
    'Svc-Key-Id': options.keyId,
    'Svc-Timestamp': timestamp,
    'Svc-Nonce': nonce,
    'Svc-Signature': `v1=${signatureHex(decodeSecret(options.secret), canonical)}`,
  };
}
