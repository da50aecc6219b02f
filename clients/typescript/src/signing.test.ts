import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalPath, canonicalQuery, canonicalString, signRequest, splitTarget } from './signing.ts';

describe('canonical path (line 3)', () => {
  it.each([
    ['/v1/parties/abc', '/v1/parties/abc'],
    ['v1/parties', '/v1/parties'],
    ['/v1/%7euser', '/v1/~user'],
    ['/v1/%41%62%2D%2e%5F', '/v1/Ab-._'],
    ['/v1/a%2fb', '/v1/a%2Fb'],
    ['/v1/%e2%82%ac', '/v1/%E2%82%AC'],
    ['/v1/a%20b', '/v1/a%20b'],
    ['/v1/./a/../b//c', '/v1/./a/../b//c'],
    ['/v1/%zz/%4', '/v1/%zz/%4'],
    ['/v1/100%', '/v1/100%'],
  ])('%s -> %s', (raw, expected) => {
    expect(canonicalPath(raw)).toBe(expected);
  });
});

describe('canonical query (line 4)', () => {
  it.each([
    ['', ''],
    ['b=2&a=1', 'a=1&b=2'],
    ['a=2&a=1&a=10', 'a=1&a=10&a=2'],
    ['q=a+b', 'q=a%20b'],
    ['q=a%2Bb', 'q=a%2Bb'],
    ['q=a%20b', 'q=a%20b'],
    ['flag', 'flag='],
    ['flag=', 'flag='],
    ['&&a=1&&', 'a=1'],
    ['k=a=b', 'k=a%3Db'],
    ["k=!'()*", 'k=%21%27%28%29%2A'],
    ['k=%7e%7E', 'k=~~'],
    ['k=%zz', 'k=%25zz'],
    ['k=100%', 'k=100%25'],
    ['k=%4', 'k=%254'],
    ['%C3%A9=%c3%bc', '%C3%A9=%C3%BC'],
    ['é=ü', '%C3%A9=%C3%BC'],
    ['b=1&B=1&a=1', 'B=1&a=1&b=1'],
    ['limit=50&cursor=abc%2Fdef&direction=in', 'cursor=abc%2Fdef&direction=in&limit=50'],
  ])('%s -> %s', (raw, expected) => {
    expect(canonicalQuery(raw)).toBe(expected);
  });
});

describe('canonical string and signature', () => {
  it('joins eight lines with line feeds and no trailing line feed', () => {
    const text = canonicalString({
      method: 'post',
      target: '/v1/movements?b=2&a=1#frag',
      bodySha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      timestamp: '1788264000',
      nonce: 'n-1',
      keyId: 'svc_test_abc',
    });
    expect(text).toBe(
      'SVC-HMAC-SHA256\nPOST\n/v1/movements\na=1&b=2\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n1788264000\nn-1\nsvc_test_abc',
    );
  });

  it('splits the query and drops the fragment', () => {
    expect(splitTarget('/a?x=1#y')).toEqual({ path: '/a', query: 'x=1' });
    expect(splitTarget('/a')).toEqual({ path: '/a', query: '' });
  });

  it('signs with the base64url-decoded secret bytes, not the text', () => {
    const secretBytes = Buffer.alloc(32, 7);
    const secret = secretBytes.toString('base64url');
    const headers = signRequest({ keyId: 'svc_test_k', secret, method: 'GET', target: '/v1/events/x', timestamp: 1788264000, nonce: 'abc' });
    const canonical = 'SVC-HMAC-SHA256\nGET\n/v1/events/x\n\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n1788264000\nabc\nsvc_test_k';
    const expected = createHmac('sha256', secretBytes).update(canonical).digest('hex');
    expect(headers['Svc-Signature']).toBe(`v1=${expected}`);
    expect(headers['Svc-Signature']).not.toBe(`v1=${createHmac('sha256', secret).update(canonical).digest('hex')}`);
  });
});
