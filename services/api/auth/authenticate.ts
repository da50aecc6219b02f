import { timingSafeEqual } from 'node:crypto';
import {
  canonicalString,
  sha256Hex,
  signatureHex,
  SIGNING_HEADERS,
} from '../../../clients/typescript/src/signing.ts';
import type { ApiKey } from '../../../platform/keys/api-keys.ts';
import type { ErrorCode } from '../../../schemas/errors/catalog.ts';

const TIMESTAMP_TOLERANCE_S = 300;

const TIMESTAMP = /^[0-9]{1,12}$/;
const NONCE = /^[A-Za-z0-9._~-]{1,64}$/;
const SIGNATURE = /^v1=[0-9a-f]{64}$/;
// Compared against when the key id is unknown, so an unknown key costs the same as a wrong secret.
const DECOY_SECRET = Buffer.alloc(32);

export interface AuthRequest {
  method: string;
  target: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface AuthDeps {
  findKey: (keyId: string) => Promise<ApiKey | undefined>;
  now: () => Date;
}

export type AuthOutcome =
  // Verified; the nonce is still to be claimed (at `at`), by the caller.
  | { ok: true; key: ApiKey; nonce: string; at: Date }
  // 401 with the code of the first check that failed.
  | { ok: false; code: ErrorCode; detail: string };

function header(headers: AuthRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export const NONCE_REPLAYED_DETAIL = 'this nonce was already used with this key; sign every attempt with a fresh nonce';

// The spec's checks in the spec's order, up to the nonce's claim; the first failure is the
// answer. The caller claims the nonce (the last check) only after the signature verifies, so a
// forged request cannot burn a real nonce.
export async function authenticate(request: AuthRequest, deps: AuthDeps): Promise<AuthOutcome> {
  // The deferred enterprise scheme (RFC 9421) fails closed rather than being ignored.
  if (header(request.headers, 'signature-input') !== undefined || header(request.headers, 'signature') !== undefined) {
    return { ok: false, code: 'svc:auth/unsupported_scheme', detail: 'RFC 9421 message signatures are not supported; sign with SVC-HMAC-SHA256' };
  }

  const keyId = header(request.headers, SIGNING_HEADERS.keyId);
  const timestamp = header(request.headers, SIGNING_HEADERS.timestamp);
  const nonce = header(request.headers, SIGNING_HEADERS.nonce);
  const signature = header(request.headers, SIGNING_HEADERS.signature);
  if (!keyId || !timestamp || !nonce || !signature) {
    return { ok: false, code: 'svc:auth/unauthenticated', detail: 'Svc-Key-Id, Svc-Timestamp, Svc-Nonce and Svc-Signature are all required' };
  }

  const now = deps.now();
  // Whole seconds on both sides, as the header counts them: between two seconds of service time,
  // 300 s behind is as acceptable as 300 s ahead.
  if (!TIMESTAMP.test(timestamp) || Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > TIMESTAMP_TOLERANCE_S) {
    return { ok: false, code: 'svc:auth/timestamp_skew', detail: `Svc-Timestamp must be Unix seconds within ${TIMESTAMP_TOLERANCE_S} s of service time` };
  }

  if (!NONCE.test(nonce) || !SIGNATURE.test(signature)) {
    return { ok: false, code: 'svc:auth/invalid_signature', detail: 'Svc-Nonce or Svc-Signature is malformed' };
  }
  const key = await deps.findKey(keyId);
  const expected = signatureHex(
    key?.secret ?? DECOY_SECRET,
    canonicalString({
      method: request.method,
      target: request.target,
      bodySha256: sha256Hex(request.body),
      timestamp,
      nonce,
      keyId,
    }),
  );
  const matches = timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(signature.slice(3), 'hex'));
  if (!key || !matches) {
    return { ok: false, code: 'svc:auth/invalid_signature', detail: 'the signature does not match the request' };
  }
  return { ok: true, key, nonce, at: now };
}
