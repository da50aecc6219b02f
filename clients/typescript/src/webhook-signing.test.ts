import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signatureHeader } from './webhook-signing.ts';

const T = 1700000000;
const SECRET = 'whsec_test_secret';
const OTHER_SECRET = 'whsec_other_secret';

// Written out independently of signature.ts: `<t>.<raw body>` keyed with the secret's UTF-8 bytes.
function expectedHex(t: number, body: Buffer, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`, 'ascii'), body]))
    .digest('hex');
}

describe('signatureHeader', () => {
  it('matches a known-answer vector', () => {
    const body = Buffer.from('{"id":"evt_1","amount":12.5}', 'utf8');
    const header = signatureHeader(T, body, [SECRET]);
    expect(header).toBe(`t=1700000000,v1=${expectedHex(T, body, SECRET)}`);
    // Pinned too (from `openssl dgst -sha256 -hmac`), so a change on both sides cannot pass unseen.
    expect(header).toBe('t=1700000000,v1=b20f9b8e0218e698af20f47ddef9fa6949d7b6da2365eaaf0564d0cd3ce13edc');
  });

  it('keys the HMAC with the whole secret string, prefix included, not its decoded base64url', () => {
    const secret = newWebhookSecret();
    const body = Buffer.from('{}');
    const decodedKey = Buffer.from(secret.slice('whsec_'.length), 'base64url');
    const decodedHex = createHmac('sha256', decodedKey).update(`${T}.`).update(body).digest('hex');
    expect(signatureHeader(T, body, [secret])).toBe(`t=${T},v1=${expectedHex(T, body, secret)}`);
    expect(signatureHeader(T, body, [secret])).not.toContain(decodedHex);
  });

  it('has one v1 per secret, in the order given (current first)', () => {
    const body = Buffer.from('{"a":1}');
    const header = signatureHeader(T, body, [SECRET, OTHER_SECRET]);
    expect(header).toBe(`t=${T},v1=${expectedHex(T, body, SECRET)},v1=${expectedHex(T, body, OTHER_SECRET)}`);
    expect(signatureHeader(T, body, [OTHER_SECRET, SECRET])).toBe(
      `t=${T},v1=${expectedHex(T, body, OTHER_SECRET)},v1=${expectedHex(T, body, SECRET)}`,
    );
  });

  it('signs the raw bytes, not re-serialised JSON', () => {
    // Non-ASCII, a tab, a CRLF, spaces around the colon: all lost by JSON.parse + JSON.stringify.
    const raw = Buffer.from('{ "name" :\t"Zoë – 東京",\r\n  "n": 1.0 }', 'utf8');
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))), 'utf8');
    expect(reserialised.equals(raw)).toBe(false);

    const header = signatureHeader(T, raw, [SECRET]);
    expect(header).toBe(`t=${T},v1=${expectedHex(T, raw, SECRET)}`);
    expect(header).not.toBe(signatureHeader(T, reserialised, [SECRET]));
  });

  it('signs bytes that are not valid UTF-8 as they are', () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(signatureHeader(T, raw, [SECRET])).toBe(`t=${T},v1=${expectedHex(T, raw, SECRET)}`);
  });

  it('signs t = 0', () => {
    expect(signatureHeader(0, Buffer.from(''), [SECRET])).toBe(`t=0,v1=${expectedHex(0, Buffer.from(''), SECRET)}`);
  });

  it('throws on an empty secrets list or an empty secret', () => {
    expect(() => signatureHeader(T, Buffer.from('{}'), [])).toThrow(/secret/);
    expect(() => signatureHeader(T, Buffer.from('{}'), [SECRET, ''])).toThrow(/secret/);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 1e12])('throws on timestamp %s', (t) => {
    expect(() => signatureHeader(t, Buffer.from('{}'), [SECRET])).toThrow(RangeError);
  });
});

describe('newWebhookSecret', () => {
  it('is whsec_ then 32 random bytes as unpadded base64url', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64url')).toHaveLength(32);
  });

  it('is different every time', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => newWebhookSecret()));
    expect(secrets.size).toBe(100);
  });
});
