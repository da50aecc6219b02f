// Walking a generated JSON document (the OpenAPI document) member by member: a member that is
// not the object or list expected reads as an empty one, so a walk never throws on a shape.

export function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
