import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { clip, idWithin, splitName, sqlDate } from './goaml-fields.ts';
import { escapeHtml, html, markupText } from './html-writer.ts';
import { formatMoney, localPerForeign, minorToDecimal } from './money.ts';
import { el, escapeText, leaf, renderXml } from './xml-writer.ts';

describe('xml writer', () => {
  it('escapes markup, keeps "]]>" out and replaces what XML 1.0 cannot carry', () => {
    expect(escapeText('<a href="x">Tom & Jerry\'s</a>')).toBe('&lt;a href="x"&gt;Tom &amp; Jerry\'s&lt;/a&gt;');
    expect(escapeText('a]]>b')).toBe('a]]&gt;b');
    expect(escapeText('bell\u0007 nul\u0000 vt\u000B')).toBe('bell\uFFFD nul\uFFFD vt\uFFFD');
    expect(escapeText('lone \uD800 surrogate, \uFFFE')).toBe('lone \uFFFD surrogate, \uFFFD');
    expect(escapeText('tab\tline\nreturn\r')).toBe('tab\tline\nreturn&#13;');
    expect(escapeText('emoji 🙂 stays, é too')).toBe('emoji 🙂 stays, é too');
  });

  it('renders a tree, leaving out absent children, and refuses names that are not XML names', () => {
    const tree = el('report', leaf('a', 1), false, undefined, [leaf('b', 'x<y'), el('c')], el('d', leaf('e', 2n)));
    expect(renderXml(tree)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<report>\n  <a>1</a>\n  <b>x&lt;y</b>\n  <c/>\n  <d>\n    <e>2</e>\n  </d>\n</report>\n',
    );
    expect(() => leaf('a b', 'x')).toThrow();
    expect(() => el('<script>')).toThrow();
  });

  it('writes hostile text that a parser reads back unchanged', async () => {
    const hostile = '</reason><script>alert(1)</script> & "quotes" \'apos\' ]]> <!-- --> <![CDATA[x]]> \r\n end';
    const doc = renderXml(el('r', leaf('t', hostile)));
    const result = await validateXML({ xml: { fileName: 'r.xml', contents: doc }, normalization: 'c14n' });
    expect(result.errors).toEqual([]);
    // Canonical XML escapes &, <, > and CR in text; decoding those gives the text back.
    const text = /<t>([\s\S]*)<\/t>/.exec(result.normalized)![1]!;
    expect(text.replace(/&#xD;/g, '\r').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')).toBe(hostile);
  });
});

describe('html writer', () => {
  it('escapes every interpolated value and keeps markup built by html', () => {
    const name = '<img src=x onerror="alert(1)">\'';
    const inner = html`<b>${name}</b>`;
    expect(markupText(html`<p title="${name}">${inner}${[1, ' & ', 2]}${null}${undefined}</p>`)).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;"><b>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;</b>1 &amp; 2</p>',
    );
    expect(escapeHtml('nul\u0000')).toBe('nul\uFFFD');
  });
});

describe('money', () => {
  it('turns minor units into decimals by scale, in integers', () => {
    expect(minorToDecimal(1234567n, 3)).toBe('1234.567');
    expect(minorToDecimal(5n, 2)).toBe('0.05');
    expect(minorToDecimal(-5n, 2)).toBe('-0.05');
    expect(minorToDecimal(100n, 0)).toBe('100');
    // Past 2^53: no float ever touches it.
    expect(minorToDecimal(123456789012345678901n, 2)).toBe('1234567890123456789.01');
  });

  it('formats money for people with grouping and every decimal of the scale', () => {
    expect(formatMoney(15488800n, 'USD', 2)).toBe('154,888.00 USD');
    expect(formatMoney(-123456789n, 'KWD', 3)).toBe('-123,456.789 KWD');
    expect(formatMoney(1000n, 'JPY', 0)).toBe('1,000 JPY');
    expect(formatMoney(7n, 'USD', 2)).toBe('0.07 USD');
  });

  it('gives a rate as local units per foreign unit, inverting an inverse rate', () => {
    expect(localPerForeign(32571n, 4, 'direct', 10)).toBe('3.2571');
    expect(localPerForeign(12345678901234n, 13, 'direct', 10)).toBe('1.2345678901');
    // 1 / 0.307 = 3.25732899022801...
    expect(localPerForeign(307n, 3, 'inverse', 10)).toBe('3.2573289902');
    expect(localPerForeign(5n, 1, 'inverse', 10)).toBe('2');
  });
});

describe('goAML field helpers', () => {
  it('splits a legal name, with "-" for what is not there', () => {
    expect(splitName('Ada King Lovelace')).toEqual({ first: 'Ada King', last: 'Lovelace' });
    expect(splitName('  Madonna ')).toEqual({ first: '-', last: 'Madonna' });
    expect(splitName(undefined)).toEqual({ first: '-', last: '-' });
  });

  it('clips by characters, and never cuts an id (a long one becomes its hash)', () => {
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('🙂🙂🙂', 3)).toBe('🙂🙂🙂');
    expect(idWithin('mv-1', 100)).toBe('mv-1');
    const long = 'x'.repeat(101);
    expect(idWithin(long, 100)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(idWithin(long, 100)).not.toBe(idWithin(`${long}y`, 100));
    expect(sqlDate(new Date('2026-08-20T10:00:00.123Z'))).toBe('2026-08-20T10:00:00');
  });
});
