import { describe, expect, it } from 'vitest';
import { checkJsonBounds } from './json-bounds.ts';

const LIMITS = { depth: 4, members: 3, stringLength: 5 };

function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

describe('checkJsonBounds', () => {
  it('passes a value within every limit', () => {
    expect(checkJsonBounds({ a: [1, 'abcde', { b: null }], c: true }, LIMITS)).toBeUndefined();
  });

  it('names the path of the first violation in document order, and the body itself as ""', () => {
    expect(checkJsonBounds({ a: [1, 'abcdef'], b: 'abcdefg' }, LIMITS)).toEqual({ path: 'a.1', message: 'a string may hold at most 5 characters' });
    expect(checkJsonBounds({ a: { b: { c: { d: {} } } } }, LIMITS)).toEqual({ path: 'a.b.c.d', message: 'objects and arrays may nest at most 4 levels deep' });
    expect(checkJsonBounds({ a: { w: 1, x: 2, y: 3, z: 4 } }, LIMITS)).toEqual({ path: 'a', message: 'an object may hold at most 3 members' });
  });

  it('bounds objects by their members, and arrays only by what holds them', () => {
    expect(checkJsonBounds({ a: [1, 2, 3, 4, 5, 6] }, LIMITS)).toBeUndefined();
    expect(checkJsonBounds({ a: [1, 2, 3, 4, 'abcdef'] }, LIMITS)).toEqual({ path: 'a.4', message: 'a string may hold at most 5 characters' });
  });

  it("reports a member name past the limit at its object, before any violation inside the object's members", () => {
    expect(checkJsonBounds({ a: { b: 'abcdefgh', longname: 1 } }, LIMITS)).toEqual({
      path: 'a',
      message: 'a member name may hold at most 5 characters',
    });
  });

  it('stops at the depth limit however deep the value nests (no stack overflow)', () => {
    expect(checkJsonBounds(nested(200_000))).toEqual({
      path: Array.from({ length: 32 }, (_, i) => (i % 2 === 0 ? 'a' : '0')).join('.'),
      message: 'objects and arrays may nest at most 32 levels deep',
    });
  });
});
