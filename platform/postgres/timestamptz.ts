// timestamptz text as PostgreSQL writes it (DateStyle ISO): `2026-01-31 12:34:56.123456+00`,
// the offset `+HH`, `+HH:MM` or `+HH:MM:SS`. Detection reads a million of them per minute of
// load, and the library's parser (three regular expressions and a parseFloat per value) was a
// fortieth of the detect process's CPU. This reads that one shape by character codes; anything
// else (BC, infinity, a year outside 1000-9999) goes to the library's parser, which also sets
// the rule: the fraction is cut to whole milliseconds, not rounded.
const ZERO = 48;

function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    // NaN past the end of the text fails the test too.
    const digit = text.charCodeAt(i) - ZERO;
    if (!(digit >= 0 && digit <= 9)) return -1;
    value = value * 10 + digit;
  }
  return value;
}

// The value of `text`, or undefined when it is not in the shape read here.
export function parseIsoTimestamptz(text: string): Date | undefined {
  if (text.length < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 1000 || month < 1 || day < 1 || hour < 0 || minute < 0 || second < 0) return undefined;
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    // Up to six digits of fraction: the first three are the milliseconds.
    let scale = 100;
    for (i++; i < text.length; i++) {
      const digit = text.charCodeAt(i) - ZERO;
      if (digit < 0 || digit > 9) break;
      ms += digit * scale;
      scale /= 10;
    }
    ms = Math.floor(ms);
  }
  const sign = text.charCodeAt(i);
  if (sign !== 43 && sign !== 45) return undefined;
  // The offset's hours, then minutes and seconds each after a colon, as far as the text goes.
  let offsetSeconds = 0;
  let at = i + 1;
  for (const unit of [3600, 60, 1]) {
    if (at === text.length) break;
    if (unit !== 3600 && text.charCodeAt(at++) !== 58) return undefined;
    const value = digits(text, at, 2);
    if (value < 0) return undefined;
    offsetSeconds += value * unit;
    at += 2;
  }
  if (at !== text.length || at === i + 1) return undefined;
  const offsetMs = (sign === 43 ? 1 : -1) * offsetSeconds * 1000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}

export function timestamptzParser(fallback: (text: string) => unknown): (text: string) => unknown {
  return (text) => parseIsoTimestamptz(text) ?? fallback(text);
}
