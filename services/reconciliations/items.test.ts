import { describe, expect, it } from 'vitest';
import { csvLine } from './items.ts';

describe('CSV lines (RFC 4180)', () => {
  it('quotes fields with commas, quotes and line breaks, doubling quotes, and ends lines with CRLF', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', ''])).toBe('a,"b,c","say ""hi""","two\nlines",\r\n');
  });

  it('keeps signed amounts as numbers and defuses text a spreadsheet would run as a formula', () => {
    expect(csvLine(['-300', '=HYPERLINK("x")', '+1', '@sum'])).toBe('-300,"\'=HYPERLINK(""x"")",\'+1,\'@sum\r\n');
    // A formula that starts like a negative number is still a formula.
    expect(csvLine(['-1+HYPERLINK("http://x","y")', '-2+3'])).toBe('"\'-1+HYPERLINK(""http://x"",""y"")",\'-2+3\r\n');
  });
});
