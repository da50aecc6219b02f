import { createHash } from 'node:crypto';

// RFC 8785 (JCS) canonical JSON for values that came out of JSON.parse: object members sorted by
// their UTF-16 code units, no whitespace, numbers and strings in ECMAScript's JSON form. Two
// documents that differ only in key order or whitespace canonicalise to the same text.
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ',';
    out += `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`;
  }
  return `${out}}`;
}

// SHA-256 over the canonical JSON: the content hash that dedup compares.
export function contentHash(value: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest();
}
