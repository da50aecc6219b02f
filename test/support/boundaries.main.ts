import { fileURLToPath } from 'node:url';
import { importEdges, sourceFiles } from './boundaries/import-graph.ts';
import { queryCalls } from './boundaries/query-calls.ts';
import { sqlViolations, violations } from './boundaries/rules.ts';

// `npm run lint` runs this: every import that crosses a boundary of decision 0041, and every
// `.query(` call in a route or a renderer (SQL lives in stores), or none.
const root = fileURLToPath(new URL('../..', import.meta.url));
const files = sourceFiles(root);
const edges = importEdges(root, files);
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
const sql = sqlViolations(queryCalls(root, files));
for (const { rule, why, call } of sql) console.error(`${call.file}:${call.line} runs SQL itself\n  ${rule}: ${why}`);
if (sql.length > 0) {
  console.error(`boundaries: ${sql.length} SQL statement(s) outside a store`);
  process.exitCode = 1;
} else {
  console.log('boundaries: no route or renderer runs SQL itself');
}
