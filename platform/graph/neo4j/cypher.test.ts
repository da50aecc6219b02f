// No Neo4j server can run here, so every statement the adapter sends is checked by Neo4j's own
// Cypher front end instead: @neo4j-cypher/language-support's lintCypherQuery runs Neo4j's ANTLR
// grammar (syntax) and Neo4j's semantic analysis (the Java front end of the database, compiled to
// JavaScript: variables in scope, aggregation rules, clause order, LIMIT values), and checks
// labels, relationship types, property keys, parameters, functions and procedures against a
// schema we give it. The checks below are strict: no diagnostic of any severity.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lintCypherQuery, parseParameters, parseStatementsStrs, testData, type DbSchema } from '@neo4j-cypher/language-support';
import { describe, expect, it } from 'vitest';
import * as cypher from './cypher.ts';
import { GRAPH_MODEL, NEO4J_SCHEMA_DIR, SCHEMA, STATEMENTS, isDefinedStatement, splitSchemaFile, type Statement } from './cypher.ts';
import { run } from './session.ts';

type Version = 'CYPHER 5' | 'CYPHER 25';

// The built-in functions of Neo4j (the package's dump of a server's function registry, APOC
// left out: the adapter must run on a plain Neo4j) and its procedures without APOC.
function builtIns(version: Version): Pick<DbSchema, 'functions' | 'procedures'> {
  const functions = Object.fromEntries(Object.entries(testData.mockSchema.functions?.[version] ?? {}).filter(([, f]) => f.isBuiltIn));
  const procedures = Object.fromEntries(Object.entries(testData.mockSchema.procedures?.[version] ?? {}).filter(([name]) => !name.startsWith('apoc.')));
  return { functions: { [version]: functions }, procedures: { [version]: procedures } };
}

// Every diagnostic Neo4j's front end gives a statement, with the adapter's model as the schema
// and exactly the given parameters declared.
function diagnose(text: string, params: readonly string[], version: Version = 'CYPHER 5'): string[] {
  const schema: DbSchema = {
    labels: [...GRAPH_MODEL.labels],
    relationshipTypes: [...GRAPH_MODEL.relationshipTypes],
    propertyKeys: [...GRAPH_MODEL.propertyKeys],
    parameters: Object.fromEntries(params.map((p) => [p, null])),
    defaultLanguage: version,
    ...builtIns(version),
  };
  return lintCypherQuery(text, schema).diagnostics.map((d) => `${d.severity === 1 ? 'error' : 'warning'}: ${d.message}`);
}

const exported = Object.entries(cypher).filter(([, value]) => isDefinedStatement(value)) as Array<[string, Statement]>;

describe('the Cypher statements of the Neo4j GraphStore', () => {
  it('are all enumerable: STATEMENTS is every exported statement plus the schema', () => {
    expect(STATEMENTS.length).toBeGreaterThan(20);
    expect(new Set(STATEMENTS)).toEqual(new Set([...SCHEMA, ...exported.map(([, s]) => s)]));
    expect(new Set(STATEMENTS.map((s) => s.name)).size).toBe(STATEMENTS.length);
  });

  describe.each(['CYPHER 5', 'CYPHER 25'] as const)("pass Neo4j's parser and semantic analysis (%s)", (version) => {
    it.each(STATEMENTS.map((s) => [s.name, s] as const))('%s', (_, statement) => {
      expect(diagnose(statement.text, statement.params, version)).toEqual([]);
    });
  });

  it("use exactly the parameters Neo4j's parser finds in them (run() passes exactly these)", () => {
    for (const statement of STATEMENTS) expect([...statement.params].sort(), statement.name).toEqual(parseParameters(statement.text, false).sort());
  });

  it('key every node and relationship they match or merge by tenant first', () => {
    for (const statement of STATEMENTS.filter((s) => !s.name.startsWith('schema:') && s !== cypher.AWAIT_INDEXES)) {
      const labelled = [...statement.text.matchAll(/:(GraphNode|GraphEvent|GraphRetraction|GraphVersion|EDGE|MOVEMENT|SIGHTING)\b(.{0,20})/g)];
      expect(labelled.length, statement.name).toBeGreaterThan(0);
      for (const [, label, rest] of labelled) expect(`${label}${rest}`, statement.name).toMatch(/^\w+ \{tenant: (\$tenant|[a-z]+\.tenant|tenant)[,}]/);
    }
  });

  describe('the check itself (negative controls: a broken statement never passes)', () => {
    const good = cypher.NODE;
    it('passes the statement the adapter runs', () => {
      expect(diagnose(good.text, good.params)).toEqual([]);
    });
    it('catches a syntax error', () => {
      expect(diagnose(good.text.replace('RETURN', 'RETRUN'), good.params).join('\n')).toMatch(/^error: Invalid input 'RETRUN'/m);
    });
    it('catches a clause left unfinished', () => {
      const withoutReturn = cypher.FLOW.text.replace(/\nRETURN[\s\S]*$/, '');
      expect(diagnose(withoutReturn, cypher.FLOW.params.filter((p) => p !== 'limit')).join('\n')).toMatch(/error: Query cannot conclude with WITH/);
    });
    it('catches a semantic error (a variable out of scope), so the semantic analysis really ran', () => {
      const broken = cypher.FLOW.text.replace('c.key AS account', 'd.key AS account');
      expect(diagnose(broken, cypher.FLOW.params).join('\n')).toMatch(/error: Variable `d` not defined/);
    });
    it('catches an aggregation used where Neo4j refuses it', () => {
      expect(diagnose('MATCH (n:GraphNode {tenant: $tenant}) WHERE count(n) > 1 RETURN n', ['tenant']).join('\n')).toMatch(/Invalid use of aggregating function count/);
    });
    it('catches a parameter the statement uses but run() would not pass', () => {
      expect(diagnose(good.text, good.params.filter((p) => p !== 'kind')).join('\n')).toMatch(/Parameter \$kind is not defined/);
    });
    it('catches a misspelled label, relationship type or property (the model is the schema)', () => {
      expect(diagnose(good.text.replace(':GraphNode', ':GrahpNode'), good.params).join('\n')).toMatch(/Label GrahpNode is not present/);
      expect(diagnose(cypher.FLOW.text.replace(':MOVEMENT', ':MOVEMENTS'), cypher.FLOW.params).join('\n')).toMatch(/Relationship type MOVEMENTS is not present/);
      expect(diagnose(good.text.replace('n.attrs AS', 'n.atrs AS'), good.params).join('\n')).toMatch(/atrs is not present/);
    });
    it('catches a function a plain Neo4j does not have (APOC)', () => {
      expect(diagnose("MATCH (n:GraphNode {tenant: $tenant}) RETURN apoc.convert.fromJsonMap(n.attrs) AS attrs", ['tenant']).join('\n')).toMatch(/Function apoc.convert.fromJsonMap is not present/);
    });
  });
});

describe('the schema of infra/neo4j', () => {
  const files = readdirSync(NEO4J_SCHEMA_DIR).filter((f) => f.endsWith('.cypher'));

  it('is named statements, each IF NOT EXISTS, one per `;`, as Neo4j splits them', () => {
    expect(files.length).toBeGreaterThan(0);
    const fromNeo4j = files.flatMap((file) =>
      parseStatementsStrs(readFileSync(join(NEO4J_SCHEMA_DIR, file), 'utf8')).map((s) =>
        s
          .split('\n')
          .filter((line) => !line.trimStart().startsWith('//'))
          .join(' ')
          .replace(/;\s*$/, '')
          .replace(/\s+/g, ' ')
          .trim(),
      ),
    );
    expect(SCHEMA.map((s) => s.text)).toEqual(fromNeo4j.filter((s) => s.length > 0));
    for (const statement of SCHEMA) expect(statement.text).toMatch(/^CREATE (CONSTRAINT|INDEX) [a-z0-9_]+ IF NOT EXISTS FOR /);
  });

  it('is checked as whole files too', () => {
    for (const file of files) expect(diagnose(readFileSync(join(NEO4J_SCHEMA_DIR, file), 'utf8'), [])).toEqual([]);
  });

  it('uses only constraints Community Edition has (no node key, no existence or type constraint)', () => {
    for (const statement of SCHEMA) expect(statement.text).not.toMatch(/IS (NODE |RELATIONSHIP )?KEY|IS NOT NULL|IS ::|IS TYPED/);
  });

  it('splits on `;` and drops `//` lines', () => {
    expect(splitSchemaFile('// a; b\nCREATE INDEX x IF NOT EXISTS\n  FOR (n:L) ON (n.p);\n\n// c\nCREATE INDEX y IF NOT EXISTS FOR (n:L) ON (n.q);\n')).toEqual([
      'CREATE INDEX x IF NOT EXISTS FOR (n:L) ON (n.p)',
      'CREATE INDEX y IF NOT EXISTS FOR (n:L) ON (n.q)',
    ]);
  });
});

// Statements are fixed text: nothing is concatenated or interpolated at run time, and the driver
// only ever receives a statement of cypher.ts (also see store-plumbing.test.ts, which records
// every text the adapter sends while it runs every port method).
describe('no statement is built at run time', () => {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const sources = readdirSync(here)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => ({ file: f, text: readFileSync(join(here, f), 'utf8') }));

  it('cypher.ts defines each statement as one literal with no interpolation', () => {
    const source = sources.find((s) => s.file === 'cypher.ts')!.text;
    const literals = [...source.matchAll(/define\(\s*'([a-z-]+)',\s*`([^`]*)`,?\s*\)/g)];
    // Every other define( is the function itself and the schema loader's (text from infra/neo4j).
    expect(source.match(/\bdefine\(/g)).toHaveLength(literals.length + 2);
    expect(source).toContain('return define(`schema:${name}`, text);');
    for (const [, , text] of literals) expect(text).not.toContain('${');
    expect(literals.map((m) => m[1]).sort()).toEqual(STATEMENTS.filter((s) => !s.name.startsWith('schema:')).map((s) => s.name).sort());
    for (const [, name, text] of literals) expect(STATEMENTS.find((s) => s.name === name)!.text).toBe(text);
  });

  it('only session.ts calls the driver, and only with the text of a statement of cypher.ts', () => {
    const session = sources.find((s) => s.file === 'session.ts')!.text;
    expect([...session.matchAll(/(\w+)\.run\(([^,]+),/g)].map((m) => `${m[1]}.run(${m[2]}`)).toEqual(['runner.run(statement.text']);
    let calls = 0;
    for (const { file, text } of sources.filter((s) => s.file !== 'session.ts')) {
      // Elsewhere: a read budget's run or run(tx, …), each with a constant of cypher.ts (or the
      // loop variable over SCHEMA / the delete statements), never a string.
      for (const call of text.matchAll(/(\w+)\.run\(\s*([^,)]+)/g)) {
        expect(`${call[1]}.run(${call[2]}`, file).toMatch(/^budget\.run\([A-Z_]+$/);
        calls++;
      }
      for (const call of text.matchAll(/(?<![.\w])run\(\s*\w+,\s*([^,)]+)/g)) {
        expect(call[1], file).toMatch(/^([A-Z_]+|statement)$/);
        calls++;
      }
      // No Cypher text outside cypher.ts (a keyword opening a string).
      if (file !== 'cypher.ts') expect(text, file).not.toMatch(/['"`]\s*(MATCH|MERGE|UNWIND|CREATE|CALL|OPTIONAL MATCH|WITH|RETURN)\b/);
    }
    // The call sites were really found (not a pattern that matches nothing).
    expect(calls).toBeGreaterThan(15);
  });

  it('run() refuses a string, a look-alike statement, and parameters other than the statement uses', async () => {
    const runner = { run: async () => ({ records: [] }) } as never;
    await expect(run(runner, cypher.NODE.text as never, {})).rejects.toThrow(/only the statements/);
    await expect(run(runner, { ...cypher.NODE }, { tenant: 't', kind: 'party', key: 'P' })).rejects.toThrow(/only the statements/);
    await expect(run(runner, cypher.NODE, { tenant: 't', kind: 'party' })).rejects.toThrow(/missing key/);
    await expect(run(runner, cypher.NODE, { tenant: 't', kind: 'party', key: 'P', label: 'Party' })).rejects.toThrow(/unused label/);
    await expect(run(runner, cypher.NODE, { tenant: 't', kind: 'party', key: 'P' })).resolves.toEqual([]);
  });
});
