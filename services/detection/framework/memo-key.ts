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
      if (value instanceof Date) return `D${value.getTime()}`;
      if (Array.isArray(value)) return arrayKey(value);
      return objectKey(value as Record<string, unknown>);
    default:
      throw new TypeError(`no memo key for a ${typeof value}`);
  }
}

// Built by concatenation, with no intermediate arrays: these run for nearly every read of every
// evaluation, and their garbage was a tenth of what the detect process allocated.
function arrayKey(value: readonly unknown[]): string {
  let key = '[';
  for (let i = 0; i < value.length; i++) key += (i === 0 ? '' : ',') + memoKey(value[i]);
  return `${key}]`;
}

// Keys in code-unit order (any fixed order will do); a key whose value is undefined is left out,
// as an absent one.
function objectKey(value: Record<string, unknown>): string {
  const names = Object.keys(value);
  sortInPlace(names);
  let key = '{';
  let first = true;
  for (const name of names) {
    const item = value[name];
    if (item === undefined) continue;
    key += (first ? '' : ',') + quoted(name) + ':' + memoKey(item);
    first = false;
  }
  return `${key}}`;
}

// Insertion sort, by code unit: an options object has a handful of names, and Array#sort
// allocated a working copy of them for every key (a fortieth of the detect process's garbage).
function sortInPlace(names: string[]): void {
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
}

// Option names come from code: a handful, quoted once each.
const QUOTED = new Map<string, string>();
const QUOTED_LIMIT = 1000;

function quoted(name: string): string {
  let found = QUOTED.get(name);
  if (found === undefined) {
    found = JSON.stringify(name);
    if (QUOTED.size < QUOTED_LIMIT) QUOTED.set(name, found);
  }
  return found;
}
