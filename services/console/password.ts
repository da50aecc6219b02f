import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// Console passwords are hashed with scrypt (memory-hard) and stored as a PHC-like string that
// carries its parameters, so they can be raised later without invalidating stored hashes:
//   $scrypt$ln=15,r=8,p=1$<salt, base64url>$<key, base64url>
// N = 2^15, r = 8 needs 128·N·r = 32 MiB per hash.
const SCRYPT_PARAMS = { ln: 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// Parameters read back from storage are bounded, so a tampered row cannot make a login cost
// gigabytes or minutes.
const BOUNDS = { ln: [14, 20], r: [8, 16], p: [1, 4] } as const;

export interface ScryptParams {
  ln: number;
  r: number;
  p: number;
}

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const N = 2 ** params.ln;
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 128 * N * params.r * params.p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d)\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/;

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const match = PHC.exec(stored);
  if (!match) return undefined;
  const params = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  for (const name of ['ln', 'r', 'p'] as const) {
    if (params[name] < BOUNDS[name][0] || params[name] > BOUNDS[name][1]) return undefined;
  }
  return { params, salt: Buffer.from(match[4]!, 'base64url'), key: Buffer.from(match[5]!, 'base64url') };
}

// Constant-time comparison of the derived key; a malformed stored hash never verifies.
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) {
    await dummyVerify(password);
    return false;
  }
  const key = await scrypt(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

// True when a stored hash was made with weaker parameters than today's (rehashed at next login).
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return !parsed || parsed.params.ln < SCRYPT_PARAMS.ln || parsed.params.r < SCRYPT_PARAMS.r || parsed.params.p < SCRYPT_PARAMS.p;
}

// For an unknown or disabled user: the same scrypt work as a real verification, so the answer's
// timing does not tell which emails exist.
let dummy: Promise<string> | undefined;
export async function dummyVerify(password: string): Promise<void> {
  dummy ??= hashPassword(randomBytes(16).toString('base64url'));
  const parsed = parseHash(await dummy)!;
  const key = await scrypt(password, parsed.salt, parsed.params);
  timingSafeEqual(key, parsed.key);
}

// A one-time password for a new user: 144 random bits, shown once, changed at first login.
export function oneTimePassword(): string {
  return randomBytes(18).toString('base64url');
}
