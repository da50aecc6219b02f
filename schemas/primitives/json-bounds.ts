// Limits on a parsed request body, checked before anything walks it recursively (the PAN scan,
// canonical JSON, the schemas). JSON.parse itself copes with any nesting the body cap lets through,
// but a recursive walk over 100,000 levels overflows the stack. The check is iterative, so it
// cannot fail the way it guards against. The limits are far above any event the spec describes: a
// batch is an array of at most 1000 events, an event nests a few levels, and free-form members
// (metadata) are small.
export interface JsonLimits {
  // Nesting of arrays and objects; the body itself is depth 1.
  depth: number;
  // Members of one object, and items of one array.
  members: number;
  // UTF-16 code units of one string, member names included.
  stringLength: number;
}

// An array may hold more items than a batch allows, so an oversized batch is still told
// svc:batch/too_large; the body cap bounds it anyway.
const REQUEST_JSON_LIMITS: JsonLimits = { depth: 32, members: 100_000, stringLength: 65_536 };

export interface JsonBoundsViolation {
  // Dotted, as the validation errors' paths ('' for the body itself).
  path: string;
  message: string;
}

export function checkJsonBounds(value: unknown, limits: JsonLimits = REQUEST_JSON_LIMITS): JsonBoundsViolation | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 1 }];
  const at = (path: string, key: string | number) => (path === '' ? String(key) : `${path}.${key}`);
  while (stack.length > 0) {
    const { value: node, path, depth } = stack.pop()!;
    if (typeof node === 'string') {
      if (node.length > limits.stringLength) return { path, message: `a string may hold at most ${limits.stringLength} characters` };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (depth > limits.depth) return { path, message: `objects and arrays may nest at most ${limits.depth} levels deep` };
    if (Array.isArray(node)) {
      if (node.length > limits.members) return { path, message: `an array may hold at most ${limits.members} items` };
      for (let i = node.length - 1; i >= 0; i--) stack.push({ value: node[i], path: at(path, i), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(node);
    if (keys.length > limits.members) return { path, message: `an object may hold at most ${limits.members} members` };
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (key.length > limits.stringLength) return { path, message: `a member name may hold at most ${limits.stringLength} characters` };
      stack.push({ value: (node as Record<string, unknown>)[key], path: at(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}
