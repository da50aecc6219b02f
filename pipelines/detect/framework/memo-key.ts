// A memo key for a read's options: equal options give equal keys whatever the order their keys
// were written in, and options that differ give different keys. Written out by hand rather than
// through JSON.stringify with a sorting replacer: detection builds a dozen keys per subject
// evaluated, and the replacer (a call per value, an entries array and an object per level) cost
// several per cent of the detect process's CPU.
export function memoKey(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'undefined':
      return 'u';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof Date) return `D${value.toISOString()}`;
      if (Array.isArray(value)) return `[${value.map(memoKey).join(',')}]`;
      return objectKey(value as Record<string, unknown>);
    default:
      throw new TypeError(`no memo key for a ${typeof value}`);
  }
}

// Keys in code-unit order (any fixed order will do); a key whose value is undefined is left out,
// as an absent one.
function objectKey(value: Record<string, unknown>): string {
  const names = Object.keys(value)
    .filter((name) => value[name] !== undefined)
    .sort();
  return `{${names.map((name) => `${JSON.stringify(name)}:${memoKey(value[name])}`).join(',')}}`;
}
