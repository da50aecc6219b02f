// Reading what PostgreSQL's EXPLAIN (FORMAT JSON) planned: tests that pin an index to a query.

// Every index condition of a JSON plan on the named index (none: the plan does not search it).
export function indexConditions(plan: unknown, index: string): string[] {
  if (Array.isArray(plan)) return plan.flatMap((node) => indexConditions(node, index));
  if (plan === null || typeof plan !== 'object') return [];
  const node = plan as Record<string, unknown>;
  const own = node['Index Name'] === index && typeof node['Index Cond'] === 'string' ? [node['Index Cond']] : [];
  return [...own, ...Object.values(node).flatMap((value) => indexConditions(value, index))];
}
