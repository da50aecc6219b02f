// Byte-exact spans of values inside a JSON text that JSON.parse has already accepted, so each
// event of a batch can be stored as the bytes the customer sent, not a re-serialisation.
// The scanner trusts that the text is valid JSON; it only needs to find where values end.

function skipWhitespace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

function skipString(text: string, i: number): number {
  // text[i] is the opening quote. The closing one is the next quote not escaped, i.e. preceded by
  // an even run of backslashes; indexOf finds each candidate natively.
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new Error('unterminated string');
    let backslash = quote - 1;
    while (backslash >= from && text.charCodeAt(backslash) === 0x5c) backslash--;
    if ((quote - 1 - backslash) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

// Index just past the value starting at i.
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return skipString(text, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === 0x22) {
        i = skipString(text, i);
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new Error('unterminated container');
  }
  // Number, true, false or null: runs to the next delimiter.
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
    i++;
  }
  return i;
}

const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

// A member name as JSON.parse reads it; parsed only when it holds an escape.
function memberName(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

// Walks the members of the object opening at i; `member` is given each name and the index where
// its value starts, and returns the index just past that value. Returns the index past the '}'.
function walkMembers(text: string, i: number, member: (name: string, start: number) => number): number {
  i = skipWhitespace(text, i + 1);
  while (text.charCodeAt(i) !== CLOSE_BRACE) {
    const nameEnd = skipString(text, i);
    const name = memberName(text, i, nameEnd);
    i = skipWhitespace(text, skipWhitespace(text, nameEnd) + 1); // past ':'
    i = skipWhitespace(text, member(name, i));
    if (text.charCodeAt(i) === COMMA) i = skipWhitespace(text, i + 1);
  }
  return i + 1;
}

// Where a value sits in the text: [start, end).
export interface Span {
  start: number;
  end: number;
}

// Each element of the array opening at i, with its event member's span (undefined where the
// element is not an object with one), and the index past the array.
function itemSpans(text: string, i: number): { items: BatchItemSpan[]; end: number } {
  const items: BatchItemSpan[] = [];
  i = skipWhitespace(text, i + 1);
  while (text.charCodeAt(i) !== CLOSE_BRACKET) {
    let event: Span | undefined;
    const start = i;
    const end =
      text.charCodeAt(i) === OPEN_BRACE
        ? walkMembers(text, i, (name, valueStart) => {
            const valueEnd = skipValue(text, valueStart);
            // A repeated member keeps its last value, as JSON.parse does.
            if (name === 'event') event = { start: valueStart, end: valueEnd };
            return valueEnd;
          })
        : skipValue(text, i);
    items.push({ item: { start, end }, event });
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) === COMMA) i = skipWhitespace(text, i + 1);
  }
  return { items, end: i + 1 };
}

export interface BatchItemSpan {
  item: Span;
  event: Span | undefined;
}

// The spans of a batch body's items, the elements of its events array (the last events member,
// as JSON.parse keeps), with each item's event member, and the array's own span; undefined when
// the body is not an object whose events member is an array. One pass: each byte is looked at
// once.
export function batchSpans(text: string): { array: Span; items: BatchItemSpan[] } | undefined {
  const start = skipWhitespace(text, 0);
  if (text.charCodeAt(start) !== OPEN_BRACE) return undefined;
  let found: { array: Span; items: BatchItemSpan[] } | undefined;
  walkMembers(text, start, (name, valueStart) => {
    if (name !== 'events') return skipValue(text, valueStart);
    if (text.charCodeAt(valueStart) !== OPEN_BRACKET) {
      found = undefined;
      return skipValue(text, valueStart);
    }
    const items = itemSpans(text, valueStart);
    found = { array: { start: valueStart, end: items.end }, items: items.items };
    return items.end;
  });
  return found;
}

// The exact text of events[i].event for every item of a batch body (undefined where an item is
// not an object with an event member).
export function batchEventTexts(text: string): Array<string | undefined> {
  return (batchSpans(text)?.items ?? []).map(({ event }) => (event === undefined ? undefined : text.slice(event.start, event.end)));
}

// How many member names the text holds, repeats included: JSON.parse keeps only the last of a
// repeated name, so a parsed value with fewer keys than this came from a text that repeats one.
// Hops from string to string natively (outside strings a valid JSON text has no quote).
export function memberNameCount(text: string): number {
  let count = 0;
  let i = text.indexOf('"');
  while (i >= 0) {
    const end = skipString(text, i);
    if (text.charCodeAt(skipWhitespace(text, end)) === 0x3a) count++;
    i = text.indexOf('"', end);
  }
  return count;
}

const MAX_PATH_DEPTH = 64;

// The path (names and array indexes) of the first member name repeated in its object, in document
// order, or undefined when none is. Slower than memberNameCount: asked only once it found one.
export function repeatedMemberPath(text: string): string[] | undefined {
  let found: string[] | undefined;
  const visit = (i: number, path: string[]): number => {
    // Past the nesting any body may have (a value JSON.parse dropped, a repeated member's earlier
    // one, is never bounds-checked), skipped without recursing: a body nested a million levels
    // must not overflow the stack. A repeat down there is still refused, at a shallower path.
    if (found || path.length > MAX_PATH_DEPTH) return skipValue(text, i);
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE) {
      const seen = new Set<string>();
      return walkMembers(text, i, (name, start) => {
        if (!found && seen.has(name)) found = [...path, name];
        seen.add(name);
        return visit(start, [...path, name]);
      });
    }
    if (c === OPEN_BRACKET) {
      let index = 0;
      i = skipWhitespace(text, i + 1);
      while (text.charCodeAt(i) !== CLOSE_BRACKET) {
        i = skipWhitespace(text, visit(i, [...path, String(index++)]));
        if (text.charCodeAt(i) === COMMA) i = skipWhitespace(text, i + 1);
      }
      return i + 1;
    }
    return skipValue(text, i);
  };
  visit(skipWhitespace(text, 0), []);
  return found;
}
