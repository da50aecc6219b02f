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

type Span = [start: number, end: number];

// The spans of an object's members by key; a repeated key keeps its last span, as JSON.parse does.
function memberSpans(text: string, span: Span): Map<string, Span> {
  const members = new Map<string, Span>();
  let i = skipWhitespace(text, span[0]);
  if (text[i] !== '{') return members;
  i = skipWhitespace(text, i + 1);
  while (i < span[1] && text[i] !== '}') {
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd);
    i = skipWhitespace(text, i + 1); // past ':'
    const valueEnd = skipValue(text, i);
    members.set(key, [i, valueEnd]);
    i = skipWhitespace(text, valueEnd);
    if (text[i] === ',') i = skipWhitespace(text, i + 1);
  }
  return members;
}

// The spans of an array's elements.
function elementSpans(text: string, span: Span): Span[] {
  const elements: Span[] = [];
  let i = skipWhitespace(text, span[0]);
  if (text[i] !== '[') return elements;
  i = skipWhitespace(text, i + 1);
  while (i < span[1] && text[i] !== ']') {
    const end = skipValue(text, i);
    elements.push([i, end]);
    i = skipWhitespace(text, end);
    if (text[i] === ',') i = skipWhitespace(text, i + 1);
  }
  return elements;
}

function wholeSpan(text: string): Span {
  const start = skipWhitespace(text, 0);
  return [start, skipValue(text, start)];
}

// The exact text of events[i].event for every item of a batch body (undefined where an item is
// not an object with an event member).
export function batchEventTexts(text: string): Array<string | undefined> {
  const events = memberSpans(text, wholeSpan(text)).get('events');
  if (!events) return [];
  return elementSpans(text, events).map((item) => {
    const event = memberSpans(text, item).get('event');
    return event ? text.slice(event[0], event[1]) : undefined;
  });
}
