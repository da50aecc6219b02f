import { describe, expect, it } from 'vitest';
import { pathSegment } from './router.ts';

describe('pathSegment', () => {
  it('decodes a segment, and keeps one that is not valid percent-encoding as written', () => {
    expect(pathSegment('acct%2F1%20b')).toBe('acct/1 b');
    expect(pathSegment('%E0')).toBe('%E0');
    expect(pathSegment('50%')).toBe('50%');
  });
});
