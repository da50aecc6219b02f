import { describe, expect, it } from 'vitest';
import { ChunkError, ChunkHead, Utf8Validator } from './types.ts';

/** Validates `bytes` cut into the given pieces; true when valid. */
function validInPieces(bytes: Uint8Array, cuts: number[]): boolean {
  const v = new Utf8Validator();
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    if (v.push(bytes.subarray(from, to)) >= 0) return false;
    from = to;
  }
  return v.end();
}

function validByDecoder(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

describe('Utf8Validator', () => {
  it('agrees with the fatal TextDecoder on edge sequences, whole and cut anywhere', () => {
    const cases = [
      [0x41],
      [0xc2, 0x80],
      [0xc1, 0xbf], // overlong
      [0xe0, 0x9f, 0x80], // overlong
      [0xe0, 0xa0, 0x80],
      [0xed, 0x9f, 0xbf],
      [0xed, 0xa0, 0x80], // surrogate
      [0xef, 0xbf, 0xbf],
      [0xf0, 0x8f, 0xbf, 0xbf], // overlong
      [0xf0, 0x90, 0x80, 0x80],
      [0xf4, 0x8f, 0xbf, 0xbf],
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
      [0xf5, 0x80, 0x80, 0x80],
      [0x80],
      [0xe2, 0x82],
      [0xe2, 0x82, 0x41],
      [0xff],
    ];
    for (const c of cases) {
      const bytes = Uint8Array.from([0x61, ...c, 0x62]);
      const expected = validByDecoder(bytes);
      for (let cut = 0; cut <= bytes.length; cut++) expect(validInPieces(bytes, [cut])).toBe(expected);
    }
  });

  it('agrees with the fatal TextDecoder on random bytes cut at random', () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pool = [...Buffer.from('a€üｶ😀'), 0x80, 0xbf, 0xc0, 0xed, 0xf4, 0xff];
    for (let t = 0; t < 3000; t++) {
      const bytes = Uint8Array.from({ length: rand(12) }, () => pool[rand(pool.length)]!);
      const cuts = [...new Set(Array.from({ length: rand(4) }, () => rand(bytes.length + 1)))].sort((a, b) => a - b);
      expect(validInPieces(bytes, cuts)).toBe(validByDecoder(bytes));
    }
  });

  it('points at the byte where the stream stops being UTF-8', () => {
    const v = new Utf8Validator();
    expect(v.push(Buffer.from('ok €'))).toBe(-1);
    expect(v.push(Buffer.from([0x41, 0xe2, 0x82]))).toBe(-1);
    expect(v.push(Buffer.from([0x42]))).toBe(0);
    expect(new Utf8Validator().push(Buffer.from([0x41, 0x42, 0xff, 0x43]))).toBe(2);
  });
});

describe('ChunkHead', () => {
  const text = (bufs: Buffer[]) => Buffer.concat(bufs).toString();

  it('drops a BOM, whole or split, and only when asked', () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const head = new ChunkHead({ dropBom: true, skipLines: 0 });
    expect(text([head.push(bom.subarray(0, 1)), head.push(bom.subarray(1, 2)), head.push(Buffer.concat([bom.subarray(2), Buffer.from('x')])), head.end()])).toBe('x');
    const keep = new ChunkHead({ dropBom: false, skipLines: 0 });
    expect(keep.push(Buffer.concat([bom, Buffer.from('x')])).toString()).toBe('\ufeffx');
    const short = new ChunkHead({ dropBom: true, skipLines: 0 });
    expect(text([short.push(Buffer.from([0xef, 0xbb])), short.end()])).toBe(Buffer.from([0xef, 0xbb]).toString());
  });

  it('skips physical lines (LF or CRLF), whatever their content, across Buffers', () => {
    const head = new ChunkHead({ dropBom: true, skipLines: 2 });
    const out = [head.push(Buffer.from('one "x,\r')), head.push(Buffer.from('\ntwo')), head.push(Buffer.from('\nthree\nfour')), head.end()];
    expect(text(out)).toBe('three\nfour');
    expect(head.inPreamble).toBe(false);
    const tooFew = new ChunkHead({ dropBom: false, skipLines: 3 });
    expect(text([tooFew.push(Buffer.from('a\nb\n')), tooFew.end()])).toBe('');
    expect(tooFew.inPreamble).toBe(true);
  });
});

describe('ChunkError', () => {
  it('carries the chunk-level code, the row and the chunk', () => {
    const e = new ChunkError('unterminated quote', 12, 3);
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ code: 'svc:import/invalid_chunk', message: 'unterminated quote', rowNo: 12, chunkNo: 3, name: 'ChunkError' });
  });
});
