// Limits on a parsed request body, checked before anything walks it recursively (the PAN scan,
// canonical JSON, the schemas). JSON.parse itself copes with any nesting the body cap lets through,
// but a recursive walk over 100,000 levels overflows the stack. The check recurses only down to
// the depth limit, so it cannot fail the way it guards against. The limits are far above any
// event the spec describes: a batch is an array of at most 1000 events, an event nests a few
// levels, and free-form members (metadata) are small.
export interface JsonLimits {
  // Nesting of arrays and objects; the body itself is depth 1.
  depth: number;
  // Members of one object. An array's items are bounded only by the bytes that hold them (the
  // body cap): a count here would answer an oversized batch before its own check could, with
  // the wrong code (a batch of 1001 items or more is svc:batch/too_large, however many).
  members: number;
  // UTF-16 code units of one string, member names included.
  stringLength: number;
}

const REQUEST_JSON_LIMITS: JsonLimits = { depth: 32, members: 100_000, stringLength: 65_536 };

export interface JsonBoundsViolation {
  // Dotted, as the validation errors' paths ('' for the body itself).
  path: string;
  message: string;
}

// `tally`, when given, counts the members of every object walked (of a value within bounds).
// `depth`: where the value sits in its body (1: it is the body; a batch item is at 3).
export function checkJsonBounds(
  value: unknown,
  limits: JsonLimits = REQUEST_JSON_LIMITS,
  tally?: { members: number },
  depth = 1,
): JsonBoundsViolation | undefined {
  const found = boundsWalk(value, depth, limits, tally ?? { members: 0 });
  if (!found) return undefined;
  return { path: found.path.reverse().join('.'), message: found.message };
}

// Depth first in document order (the first violation found is the one reported). The recursion
// stops at the depth limit before descending any further, so it nests at most limits.depth + 1
// calls whatever the value. The path is collected only on a violation, innermost key first:
// a clean body, the usual case, costs no string per member.
function boundsWalk(node: unknown, depth: number, limits: JsonLimits, tally: { members: number }): { path: string[]; message: string } | undefined {
  if (typeof node === 'string') {
    return node.length > limits.stringLength ? { path: [], message: `a string may hold at most ${limits.stringLength} characters` } : undefined;
  }
  if (node === null || typeof node !== 'object') return undefined;
  if (depth > limits.depth) return { path: [], message: `objects and arrays may nest at most ${limits.depth} levels deep` };
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const found = boundsWalk(node[i], depth + 1, limits, tally);
      if (found) {
        found.path.push(String(i));
        return found;
      }
    }
    return undefined;
  }
  const keys = Object.keys(node);
  tally.members += keys.length;
  if (keys.length > limits.members) return { path: [], message: `an object may hold at most ${limits.members} members` };
  // Every member name is checked before any member's value, as a name past the limit is the
  // object's own violation.
  for (let i = 0; i < keys.length; i++) {
    if (keys[i]!.length > limits.stringLength) return { path: [], message: `a member name may hold at most ${limits.stringLength} characters` };
  }
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const found = boundsWalk((node as Record<string, unknown>)[key], depth + 1, limits, tally);
    if (found) {
      found.path.push(key);
      return found;
    }
  }
  return undefined;
}
