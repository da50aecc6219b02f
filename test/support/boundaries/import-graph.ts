import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parseSync } from 'oxc-parser';

// The repository's import graph as the boundary rules read it: every relative import of every
// TypeScript or JavaScript file, type-only ones included (a type import couples two layers as
// much as a value import does), with `export ... from` and literal dynamic imports. Package and
// node: imports are outside the rules and left out.
export interface ImportEdge {
  from: string; // repository-relative, forward slashes
  to: string;
  line: number;
  typeOnly: boolean;
}

// Folders that hold no source of ours: installed packages, build output, test output.
const SKIPPED = new Set(['node_modules', 'dist', 'test-artifacts', '.git']);
const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;

export function sourceFiles(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(root, path);
    return entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const posix = (path: string) => path.split(sep).join('/');

export function importEdges(root: string, files: readonly string[] = sourceFiles(root)): ImportEdge[] {
  return files.flatMap((path) => fileEdges(root, path));
}

function fileEdges(root: string, path: string): ImportEdge[] {
  const source = readFileSync(path, 'utf8');
  const parsed = parseSync(path, source);
  if (parsed.errors.length > 0) throw new Error(`${relative(root, path)}: cannot be parsed (${parsed.errors[0]?.message})`);
  const found: { specifier: string; start: number; typeOnly: boolean }[] = [];
  for (const statement of parsed.module.staticImports) {
    // `import { type A } from` is as type-only as `import type { A } from`; `import './x.ts'` is not.
    const typeOnly = statement.entries.length > 0 && statement.entries.every((entry) => entry.isType);
    found.push({ specifier: statement.moduleRequest.value, start: statement.start, typeOnly });
  }
  for (const statement of parsed.module.staticExports) {
    for (const entry of statement.entries) {
      if (entry.moduleRequest) found.push({ specifier: entry.moduleRequest.value, start: entry.start, typeOnly: entry.isType });
    }
  }
  for (const dynamic of parsed.module.dynamicImports) {
    const literal = /^(['"`])([^'"`$]*)\1$/.exec(source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end));
    if (literal) found.push({ specifier: literal[2]!, start: dynamic.start, typeOnly: false });
  }
  const from = posix(relative(root, path));
  return found
    .filter((edge) => edge.specifier.startsWith('./') || edge.specifier.startsWith('../'))
    .map((edge) => ({
      from,
      to: posix(relative(root, resolve(dirname(path), edge.specifier))),
      line: lineOf(source, edge.start),
      typeOnly: edge.typeOnly,
    }));
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}
