import { hash } from 'node:crypto';

// RFC 8785 (JCS) canonical JSON for values that came out of JSON.parse: object members sorted by
// their UTF-16 code units, no whitespace, numbers and strings in ECMAScript's JSON form. Two
// documents that differ only in key order or whitespace canonicalise to the same text.
export function canonicalJson(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ',';
    out += quotedMember(key);
    out += canonicalJson((value as Record<string, unknown>)[key]);
  }
  return `${out}}`;
}

// A string with nothing JSON escapes (a quote, a backslash, a control character) and no surrogate
// is written as it is, which JSON.stringify would also do; the pattern's test costs less than the
// call, and an event is mostly such strings.
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

function quoted(text: string): string {
  return ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`;
}

// Member names repeat from event to event (amount, currency, ...): each one's quoted form is made
// once per process. Bounded, as the names come from requests: past the bound, or for a long name,
// it is made each time.
const QUOTED_MEMBERS = new Map<string, string>();
const QUOTED_MEMBERS_MAX = 4096;
const QUOTED_MEMBER_MAX_LENGTH = 64;

function quotedMember(key: string): string {
  let quoted = QUOTED_MEMBERS.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (QUOTED_MEMBERS.size < QUOTED_MEMBERS_MAX && key.length <= QUOTED_MEMBER_MAX_LENGTH) QUOTED_MEMBERS.set(key, quoted);
  }
  return quoted;
}

// SHA-256 over the canonical JSON: the content hash that dedup compares.
export function contentHash(value: unknown): Buffer {
  return hash('sha256', canonicalJson(value), 'buffer');
}
