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
});
