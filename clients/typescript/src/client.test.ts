import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SvcClient } from './client.ts';

describe('SvcClient', () => {
  it('never shows its key secret to util.inspect or JSON.stringify (a logger handed the client)', () => {
    const secret = Buffer.alloc(32, 0x5a).toString('base64url');
    const client = new SvcClient({ baseUrl: 'https://svc.example', keyId: 'svc_test_k', secret });
    const shown = [inspect(client, { depth: Infinity, showHidden: true }), JSON.stringify(client)];
    for (const text of shown) {
      expect(text).toContain('svc_test_k');
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret, 'base64url').toString('hex'));
    }
  });

  it('refuses a secret that is not 32 bytes of base64url text, without echoing it', () => {
    const secret = Buffer.alloc(32, 0x5a).toString('base64url');
    const make = (given: string) => () => new SvcClient({ baseUrl: 'https://svc.example', keyId: 'svc_test_k', secret: given });
    // Decoded leniently, each of these signs with other bytes than the key's.
    for (const wrong of [`svc_test_k${secret}`, `${secret}\n`, ` ${secret}`, secret.slice(1), Buffer.alloc(31).toString('base64url'), Buffer.alloc(32, 0xfb).toString('base64')]) {
      expect(make(wrong), JSON.stringify(wrong)).toThrow(TypeError);
      try {
        make(wrong)();
      } catch (error) {
        expect((error as Error).message).not.toContain(secret.slice(4, 20));
      }
    }
    expect(make(secret)).not.toThrow();
    expect(make(`${secret}=`)).not.toThrow();
  });
});
