import { describe, expect, it } from 'vitest';
import { KnownEntities } from './known-entities.ts';

describe('KnownEntities', () => {
  it('remembers parties and instruments, never accounts (whose holder can change)', () => {
    expect(['party', 'instrument', 'account', 'movement'].map((object) => KnownEntities.remembers(object))).toEqual([true, true, false, false]);
  });

  it('forgets the oldest entry past its limit, and an entry added again keeps its place', () => {
    const known = new KnownEntities(2);
    known.add('a');
    known.add('b');
    known.add('a');
    known.add('c');
    expect([known.has('a'), known.has('b'), known.has('c'), known.size]).toEqual([false, true, true, 2]);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new KnownEntities(0)).toThrow(/positive integer/);
    expect(() => new KnownEntities(1.5)).toThrow(/positive integer/);
  });
});
