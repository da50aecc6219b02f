import { fileURLToPath } from 'node:url';
import { importEdges } from './boundaries/import-graph.ts';
import { violations } from './boundaries/rules.ts';

// `npm run lint` runs this: every import that crosses a boundary of decision 0041, or none.
const root = fileURLToPath(new URL('../..', import.meta.url));
const edges = importEdges(root);
const found = violations(edges);
for (const { rule, why, edge } of found) {
  console.error(`${edge.from}:${edge.line} imports ${edge.to}${edge.typeOnly ? ' (types only)' : ''}\n  ${rule}: ${why}`);
}
if (found.length > 0) {
  console.error(`boundaries: ${found.length} forbidden import(s)`);
  process.exitCode = 1;
} else {
  console.log(`boundaries: ${edges.length} imports checked, none crosses a boundary`);
}
