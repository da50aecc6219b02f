import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash } from './canonical-json.ts';
import { batchEventTexts, memberNameCount, repeatedMemberPath } from './json-spans.ts';

describe('canonical JSON (RFC 8785 style)', () => {
  it('ignores key order and whitespace', () => {
    const a = JSON.parse('{"b": 1, "a": {"y": [1, 2, {"k": "v"}], "x": null}}');
    const b = JSON.parse('{"a":{"x":null,"y":[1,2,{"k":"v"}]},"b":1}');
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[1,2,{"k":"v"}]},"b":1}');
    expect(contentHash(a).equals(contentHash(b))).toBe(true);
  });

  it('keeps array order and distinguishes values', () => {
    expect(contentHash([1, 2]).equals(contentHash([2, 1]))).toBe(false);
    expect(contentHash({ a: '1' }).equals(contentHash({ a: 1 }))).toBe(false);
  });

  it('sorts keys by UTF-16 code units and writes numbers in ECMAScript form', () => {
    expect(canonicalJson(JSON.parse('{"\u00e9":1,"z":2,"A":3,"\ud83d\ude00":4}'))).toBe('{"A":3,"z":2,"\u00e9":1,"\ud83d\ude00":4}');
    expect(canonicalJson(JSON.parse('[1.0, 1e2, -0, 0.1]'))).toBe('[1,100,0,0.1]');
  });

  it('writes every string as JSON.stringify does, escapes and lone surrogates included', () => {
    for (const text of ['plain', 'a"b', 'a\\b', 'tab\there', '\u0000\u001f\u007f', '\u2028', '\ud83d\ude00', '\ud800', 'x\udc00y', '']) {
      expect(canonicalJson(text)).toBe(JSON.stringify(text));
      expect(canonicalJson({ [text]: [text] })).toBe(`{${JSON.stringify(text)}:[${JSON.stringify(text)}]}`);
    }
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => canonicalJson(text) === JSON.stringify(text)), { numRuns: 2000 });
  });

  it('writes every member name the same way, however many names and however long, and escapes them', () => {
    // More distinct names than the process keeps quoted, some past the length it keeps.
    const names = Array.from({ length: 5000 }, (_, i) => (i % 7 === 0 ? `${'n'.repeat(80)}${i}` : `name"${i}`));
    const value = Object.fromEntries(names.map((name, i) => [name, i]));
    const expected = `{${[...names].sort().map((name) => `${JSON.stringify(name)}:${value[name]}`).join(',')}}`;
    expect(canonicalJson(value)).toBe(expected);
    expect(canonicalJson(value)).toBe(expected);
    expect(canonicalJson(JSON.parse('{"\\u0001\\"":[{}],"":[]}'))).toBe('{"":[],"\\u0001\\"":[{}]}');
  });
});

describe('batch event spans', () => {
  it('returns each event exactly as sent', () => {
    const body = '{ "events" : [ {"object":"party", "event" : {"b" : "x,]}" ,\n "a":[1, {"q":"\\"}"}]} }, {"event":{"z":1},"object":"movement"}, 5, {"object":"x"} ] }';
    expect(() => JSON.parse(body)).not.toThrow();
    const texts = batchEventTexts(body);
    expect(texts).toEqual(['{"b" : "x,]}" ,\n "a":[1, {"q":"\\"}"}]}', '{"z":1}', undefined, undefined]);
    // An even run of backslashes before a quote ends the string; an odd one escapes it.
    const escapes = '{"events":[{"event":{"a":"\\\\","b":"\\\\\\"]}"}}]}';
    expect(batchEventTexts(escapes)).toEqual(['{"a":"\\\\","b":"\\\\\\"]}"}']);
    expect(JSON.parse(batchEventTexts(escapes)[0]!)).toEqual(JSON.parse(escapes).events[0].event);
    expect(JSON.parse(texts[0]!)).toEqual(JSON.parse(body).events[0].event);
  });

  it('takes the last of repeated members, as JSON.parse does', () => {
    const body = '{"events":[{"event":{"v":1},"event":{"v":2}}],"events":[{"event":{"v":3}}]}';
    expect(batchEventTexts(body)).toEqual(['{"v":3}']);
  });

  it('reads member names with escapes as JSON.parse does, and only the body\'s own events', () => {
    const body = '{"\\u0065vents":[{"ev\\u0065nt" : {"v":[1,"]"]}},{"event":{}} ],"other":{"events":[{"event":1}]}} ';
    expect(JSON.parse(body).events).toHaveLength(2);
    expect(batchEventTexts(body)).toEqual(['{"v":[1,"]"]}', '{}']);
    expect(batchEventTexts('{"events":{"event":1}}')).toEqual([]);
    expect(batchEventTexts('[{"event":1}]')).toEqual([]);
  });
});

describe('repeated member names', () => {
  const keysOf = (value: unknown): number =>
    Array.isArray(value) ? value.reduce((n: number, v) => n + keysOf(v), 0) : value !== null && typeof value === 'object' ? Object.entries(value).reduce((n, [, v]) => n + 1 + keysOf(v), 0) : 0;

  it('counts member names as JSON.parse keeps them when none repeats, whatever strings, escapes and spacing hold', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2), (value, space) => {
        const text = JSON.stringify(value, null, space);
        expect(memberNameCount(text)).toBe(keysOf(JSON.parse(text)));
        expect(repeatedMemberPath(text)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('finds the first repeated name, in document order, with its path', () => {
    const text = '{"a":"x\\":","events":[{"event":{"data":{"memo":"card 4111 1111 1111 1111" , "memo" :"dinner"}}}],"a":1}';
    expect(memberNameCount(text)).toBe(keysOf(JSON.parse(text)) + 2);
    expect(repeatedMemberPath(text)).toEqual(['events', '0', 'event', 'data', 'memo']);
    // Names are compared as parsed: an escaped spelling repeats the plain one.
    expect(repeatedMemberPath('{"m":1,"\\u006d":2}')).toEqual(['m']);
    // The same name in two objects is no repeat.
    expect(repeatedMemberPath('[{"m":1},{"m":2}]')).toBeUndefined();
  });

  it('walks a value a million levels deep without overflowing the stack, as an earlier repeated member may be', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    expect(repeatedMemberPath(`{"events":${deep},"events":[]}`)).toEqual(['events']);
    expect(repeatedMemberPath(`{"a":${deep}}`)).toBeUndefined();
  });
});
