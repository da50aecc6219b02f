import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeader } from './webhook-signing.ts';
import { parseSignatureHeader, verifyWebhookSignature, type VerifyOptions } from './webhook-signature.ts';

const T = 1700000000;
const at = (seconds: number) => ({ now: () => seconds * 1000 });
const AT_T = at(T);
const OLD = newWebhookSecret();
const NEW = newWebhookSecret();
const BODY = Buffer.from('{ "id": "evt_1",  "amount" : 12.50, "name": "Zoë" }', 'utf8');
const HEX = 'a'.repeat(64);

function verify(header: string | undefined, secrets: string | readonly string[] = OLD, options: VerifyOptions = AT_T, body: Uint8Array | string = BODY) {
  return verifyWebhookSignature(body, header, secrets, options);
}

describe('round trip with the service signer', () => {
  it('verifies a Buffer body', () => {
    expect(verify(signatureHeader(T, BODY, [OLD]))).toEqual({ ok: true, timestamp: T });
  });

  it('verifies a plain Uint8Array body', () => {
    expect(verify(signatureHeader(T, BODY, [OLD]), OLD, AT_T, new Uint8Array(BODY))).toEqual({ ok: true, timestamp: T });
  });

  it('verifies a string body as its UTF-8 bytes', () => {
    expect(verify(signatureHeader(T, BODY, [OLD]), OLD, AT_T, BODY.toString('utf8'))).toEqual({ ok: true, timestamp: T });
  });

  it('uses Date.now by default', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhookSignature(BODY, signatureHeader(now, BODY, [OLD]), OLD)).toEqual({ ok: true, timestamp: now });
  });

  it('fails with the wrong secret, a changed body or a changed t', () => {
    const header = signatureHeader(T, BODY, [OLD]);
    expect(verify(header, NEW)).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(verify(header, OLD, AT_T, Buffer.concat([BODY, Buffer.from(' ')]))).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(verify(header.replace(`t=${T}`, `t=${T + 1}`))).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('fails on a re-serialised body', () => {
    const header = signatureHeader(T, BODY, [OLD]);
    const reserialised = JSON.stringify(JSON.parse(BODY.toString('utf8')));
    expect(verify(header, OLD, AT_T, reserialised)).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(verify(header, OLD, AT_T, Buffer.from(reserialised))).toEqual({ ok: false, reason: 'no_matching_signature' });
  });
});

describe('malformed header (rule 4)', () => {
  const sig = () => signatureHeader(T, BODY, [OLD]).split(',')[1]!;
  it.each([
    ['missing t', () => sig()],
    ['missing v1', () => `t=${T}`],
    ['only unknown signature keys', () => `t=${T},v0=${HEX},v2=${HEX}`],
    ['t with 13 digits', () => `t=0${T}00,${sig()}`],
    ['t empty', () => `t=,${sig()}`],
    ['t negative', () => `t=-${T},${sig()}`],
    ['t with a plus sign', () => `t=+${T},${sig()}`],
    ['t with a decimal', () => `t=${T}.0,${sig()}`],
    ['t in exponent form', () => `t=1.7e9,${sig()}`],
    ['t with inner spaces', () => `t= ${T},${sig()}`],
    ['duplicated t, same value', () => `t=${T},t=${T},${sig()}`],
    ['duplicated t, different value', () => `t=${T},${sig()},t=${T + 1}`],
    ['empty header', () => ''],
    ['only commas and spaces', () => ' , ,'],
  ])('%s', (_, header) => {
    expect(verify(header())).toEqual({ ok: false, reason: 'malformed_header' });
    expect(parseSignatureHeader(header())).toBeUndefined();
  });

  it('undefined header', () => {
    expect(verify(undefined)).toEqual({ ok: false, reason: 'malformed_header' });
  });

  it('a non-string header from a JavaScript caller, without throwing', () => {
    const header = [signatureHeader(T, BODY, [OLD])] as unknown as string;
    expect(verify(header)).toEqual({ ok: false, reason: 'malformed_header' });
    expect(verify(null as unknown as string)).toEqual({ ok: false, reason: 'malformed_header' });
    expect(parseSignatureHeader(header)).toBeUndefined();
  });

  it('is reported before the timestamp and the signature', () => {
    expect(verify(`t=${T}`, [], at(T + 10_000))).toEqual({ ok: false, reason: 'malformed_header' });
  });
});

describe('parseSignatureHeader', () => {
  it('returns t and every v1 as sent, ignoring unknown keys and entries without =', () => {
    expect(parseSignatureHeader(` t=${T} , v0=x ,v1=${HEX},junk,,v1=NOT-HEX, v2=${HEX}`)).toEqual({
      timestamp: T,
      signatures: [HEX, 'NOT-HEX'],
    });
  });

  it('accepts 12 digits and leading zeros', () => {
    expect(parseSignatureHeader(`t=999999999999,v1=${HEX}`)?.timestamp).toBe(999999999999);
    expect(parseSignatureHeader(`t=0001,v1=${HEX}`)?.timestamp).toBe(1);
  });
});

describe('tolerance', () => {
  const header = signatureHeader(T, BODY, [OLD]);
  it.each([
    ['300 s in the past', T + 300, true],
    ['301 s in the past', T + 301, false],
    ['300 s in the future', T - 300, true],
    ['301 s in the future', T - 301, false],
  ])('t %s', (_, nowS, ok) => {
    expect(verify(header, OLD, at(nowS)).ok).toBe(ok);
    if (!ok) expect(verify(header, OLD, at(nowS))).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
  });

  it('is exact to the millisecond', () => {
    expect(verify(header, OLD, { now: () => (T + 300) * 1000 + 1 }).ok).toBe(false);
    expect(verify(header, OLD, { now: () => (T - 300) * 1000 - 1 }).ok).toBe(false);
  });

  it('can be changed', () => {
    expect(verify(header, OLD, { ...at(T + 60), toleranceS: 60 }).ok).toBe(true);
    expect(verify(header, OLD, { ...at(T + 61), toleranceS: 60 })).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
    expect(verify(header, OLD, { ...at(T - 61), toleranceS: 60 })).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
    expect(verify(header, OLD, { ...at(T + 1000), toleranceS: 1000 }).ok).toBe(true);
    expect(verify(header, OLD, { ...at(T), toleranceS: 0 }).ok).toBe(true);
    expect(verify(header, OLD, { ...at(T + 1), toleranceS: 0 }).ok).toBe(false);
  });

  it('is checked before the signature', () => {
    expect(verify(header, NEW, at(T + 301))).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
  });

  it('fails closed when the clock returns NaN', () => {
    expect(verify(header, OLD, { now: () => Number.NaN })).toEqual({ ok: false, reason: 'timestamp_outside_tolerance' });
  });

  it('rejects a parsed body as a programming error', () => {
    const parsedBody = JSON.parse(BODY.toString('utf8')) as unknown as string;
    expect(() => verify(header, OLD, AT_T, parsedBody)).toThrow(TypeError);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('rejects toleranceS %s as a programming error', (toleranceS) => {
    expect(() => verify(header, OLD, { ...AT_T, toleranceS })).toThrow(RangeError);
  });
});

describe('rotation (rule 5)', () => {
  const header = signatureHeader(T, BODY, [NEW, OLD]);
  it('the header carries two v1 entries', () => {
    expect(parseSignatureHeader(header)?.signatures).toHaveLength(2);
  });
  it('a consumer holding only the old secret verifies', () => {
    expect(verify(header, OLD)).toEqual({ ok: true, timestamp: T });
    expect(verify(header, [OLD])).toEqual({ ok: true, timestamp: T });
  });
  it('a consumer holding only the new secret verifies', () => {
    expect(verify(header, NEW)).toEqual({ ok: true, timestamp: T });
  });
  it('a consumer holding both, in either order, verifies', () => {
    expect(verify(header, [NEW, OLD])).toEqual({ ok: true, timestamp: T });
    expect(verify(header, [OLD, NEW])).toEqual({ ok: true, timestamp: T });
  });
  it('a consumer holding both verifies a delivery signed by either one alone', () => {
    expect(verify(signatureHeader(T, BODY, [OLD]), [NEW, OLD])).toEqual({ ok: true, timestamp: T });
    expect(verify(signatureHeader(T, BODY, [NEW]), [NEW, OLD])).toEqual({ ok: true, timestamp: T });
  });
  it('a consumer holding neither fails', () => {
    expect(verify(header, [newWebhookSecret(), newWebhookSecret()])).toEqual({ ok: false, reason: 'no_matching_signature' });
  });
});

describe('secrets held', () => {
  const header = signatureHeader(T, BODY, [OLD]);
  it('an empty list never matches', () => {
    expect(verify(header, [])).toEqual({ ok: false, reason: 'no_matching_signature' });
  });
  it('empty strings are ignored, so an unset variable is not an HMAC key anybody can use', () => {
    const forged = createHmac('sha256', '').update(`${T}.`).update(BODY).digest('hex');
    const emptyKeyHeader = `t=${T},v1=${forged}`;
    expect(verify(emptyKeyHeader, '')).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(verify(header, ['', OLD])).toEqual({ ok: true, timestamp: T });
  });
});

describe('v1 entries', () => {
  const header = signatureHeader(T, BODY, [OLD]);
  const v1 = parseSignatureHeader(header)!.signatures[0]!;

  it('uppercase hex does not match', () => {
    expect(verify(`t=${T},v1=${v1.toUpperCase()}`)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it.each([
    ['too short', v1.slice(0, 63)],
    ['too long', `${v1}0`],
    ['not hex', `${v1.slice(0, 63)}g`],
    ['empty', ''],
    ['non-ASCII', `${v1.slice(0, 63)}é`],
  ])('a v1 that is %s never matches and never throws', (_, value) => {
    expect(verify(`t=${T},v1=${value}`)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('a bad v1 next to a good one still verifies', () => {
    expect(verify(`t=${T},v1=${HEX},v1=zz,${header.split(',')[1]}`)).toEqual({ ok: true, timestamp: T });
  });

  it('extra unknown entries are ignored, anywhere in the header', () => {
    expect(verify(`v0=${HEX},${header},v2=${HEX},scheme=hmac,flag`)).toEqual({ ok: true, timestamp: T });
  });

  it('spaces and tabs around entries are allowed', () => {
    expect(verify(` t=${T} ,\t${header.split(',')[1]} `)).toEqual({ ok: true, timestamp: T });
  });

  it('an unknown key carrying the right signature does not count', () => {
    expect(verify(`t=${T},v2=${v1}`)).toEqual({ ok: false, reason: 'malformed_header' });
    expect(verify(`t=${T},v2=${v1},v1=${HEX}`)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });
});

describe('self-contained', () => {
  it('imports nothing but node:crypto', () => {
    const source = readFileSync(new URL('./webhook-signature.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports).toEqual(['node:crypto']);
    expect(source).not.toMatch(/\brequire\(|\bimport\(/);
  });
});
