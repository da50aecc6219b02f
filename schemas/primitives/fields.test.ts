import { describe, expect, it } from 'vitest';
import { text, upTo } from './fields.ts';

describe('text fields', () => {
  it.each([
    ['U+0000', 'a\u0000b'],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', 'a\udfffb'],
    ['a high surrogate at the end', 'ab\ud83d'],
    ['two surrogates in the wrong order', '\ude00\ud83d'],
  ])('refuse %s, which no store downstream can hold as sent', (_, value) => {
    expect(text(1, 100).safeParse(value).success).toBe(false);
    expect(upTo(100).safeParse(value).success).toBe(false);
  });

  it.each([['plain', 'Zoë'], ['an emoji (a surrogate pair)', 'pay \ud83d\ude00'], ['right-to-left override', '\u202eabc']])('accept %s', (_, value) => {
    expect(text(1, 100).safeParse(value).success).toBe(true);
    expect(upTo(100).safeParse(value).success).toBe(true);
  });

  it('counts lengths in code points, so an emoji is one character of a limit', () => {
    const emoji = '\ud83d\ude00';
    expect(upTo(1000).safeParse(emoji.repeat(1000)).success).toBe(true);
    expect(upTo(1000).safeParse(emoji.repeat(1001)).success).toBe(false);
    expect(text(1, 3).safeParse(`a${emoji}b`).success).toBe(true);
  });
});
