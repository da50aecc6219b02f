// The generated document as published: the type provider emits every registered schema twice
// (`X` as written in responses, `XInput` as read in requests); the document keeps the forms its
// operations use, under their plain names where only one form is used.
// What the walk reads of the document; the rest passes through as it is.
interface OpenApiDocument {
  paths?: unknown;
  components?: { schemas?: Record<string, unknown> };
}

const PREFIX = '#/components/schemas/';

function refsIn(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, into);
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith(PREFIX)) into.add(child.slice(PREFIX.length));
      else refsIn(child, into);
    }
  }
}

export function publishedDocument<D extends OpenApiDocument>(document: D, alsoKeep: { output: readonly string[]; input: readonly string[] }): D {
  const schemas = document.components?.schemas ?? {};
  const kept = new Set<string>([...alsoKeep.output, ...alsoKeep.input.map((name) => `${name}Input`)]);
  refsIn(document.paths, kept);
  // Components reach others.
  for (let before = -1; before !== kept.size; ) {
    before = kept.size;
    for (const name of [...kept]) refsIn(schemas[name], kept);
  }
  const renamed = new Map<string, string>();
  for (const name of kept) {
    if (!name.endsWith('Input')) continue;
    const plain = name.slice(0, -'Input'.length);
    if (!kept.has(plain) || JSON.stringify(schemas[plain]) === JSON.stringify(schemas[name])) renamed.set(name, plain);
  }
  const rename = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (key, v) =>
      key === '$ref' && typeof v === 'string' && v.startsWith(PREFIX) && renamed.has(v.slice(PREFIX.length)) ? PREFIX + renamed.get(v.slice(PREFIX.length)) : v,
    );
  const published: Record<string, unknown> = {};
  for (const name of [...kept].sort()) {
    if (!schemas[name]) continue;
    const final = renamed.get(name) ?? name;
    if (final !== name || !published[final]) published[final] = rename(schemas[name]);
  }
  return { ...document, paths: rename(document.paths), components: { ...document.components, schemas: published } };
}
