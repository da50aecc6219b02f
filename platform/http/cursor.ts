import { createHmac, timingSafeEqual } from 'node:crypto';

// Opaque page cursors: the position and the filters they belong to, signed so a client can
// neither forge nor edit one (and cannot reuse one with other filters).
export class CursorCodec {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = createHmac('sha256', masterKey).update('page-cursor:v1').digest();
  }

  encode(payload: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  // The payload, or undefined for anything this service did not issue.
  decode(cursor: string): Record<string, unknown> | undefined {
    const dot = cursor.indexOf('.');
    if (dot < 0) return undefined;
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.sign(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      return payload && typeof payload === 'object' && !Array.isArray(payload) ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
