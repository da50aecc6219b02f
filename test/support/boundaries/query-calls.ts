import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { parseSync } from 'oxc-parser';

// Where a file runs SQL itself: every call of a `.query` method (pg's Pool, PoolClient and their
// Pick<…, 'query'> stand-ins), optional calls included. Read from the syntax tree, so a
// `request.query` property or the word in a string or comment is not one.
export interface QueryCall {
  file: string; // repository-relative, forward slashes
  line: number;
}

export function queryCalls(root: string, files: readonly string[]): QueryCall[] {
  return files.flatMap((path) => {
    const source = readFileSync(path, 'utf8');
    if (!source.includes('.query')) return [];
    const parsed = parseSync(path, source);
    if (parsed.errors.length > 0) throw new Error(`${relative(root, path)}: cannot be parsed (${parsed.errors[0]?.message})`);
    const file = relative(root, path).split(sep).join('/');
    const found: QueryCall[] = [];
    visit(parsed.program, (node) => {
      const callee = node.type === 'CallExpression' ? (node.callee as Node) : undefined;
      const property = callee?.type === 'MemberExpression' && !callee.computed ? (callee.property as Node) : undefined;
      if (property?.type === 'Identifier' && property.name === 'query') found.push({ file, line: lineOf(source, node.start as number) });
    });
    return found;
  });
}

type Node = { type: string; [key: string]: unknown };

function visit(value: unknown, onNode: (node: Node) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, onNode);
  } else if (value !== null && typeof value === 'object') {
    if (typeof (value as Node).type === 'string') onNode(value as Node);
    for (const child of Object.values(value)) if (child !== null && typeof child === 'object') visit(child, onNode);
  }
}

function lineOf(source: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}
