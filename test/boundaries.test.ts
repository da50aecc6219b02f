import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { importEdges, sourceFiles, type ImportEdge } from './support/boundaries/import-graph.ts';
import { queryCalls } from './support/boundaries/query-calls.ts';
import { sqlViolations, violations } from './support/boundaries/rules.ts';

const repository = fileURLToPath(new URL('..', import.meta.url));
const edge = (from: string, to: string): ImportEdge => ({ from, to, line: 1, typeOnly: false });
const refusedBy = (from: string, to: string) => violations([edge(from, to)]).map((v) => v.rule);

describe('boundaries (decision 0041)', () => {
  it('no import of the repository crosses a boundary', () => {
    expect(violations(importEdges(repository)).map((v) => `${v.edge.from}:${v.edge.line} -> ${v.edge.to} (${v.rule})`)).toEqual([]);
  });

  it('refuses an import across each boundary', () => {
    expect(refusedBy('services/console/routes/alerts.ts', 'services/api/routes/compliance.ts')).toEqual(['console-is-not-the-api']);
    expect(refusedBy('services/api/routes/compliance.ts', 'services/console/four-eyes.ts')).toEqual(['api-is-not-the-console']);
    expect(refusedBy('services/api/routes/imports.ts', 'pipelines/imports/worker.ts')).toEqual(['services-are-not-pipelines']);
    expect(refusedBy('pipelines/reconcile/pipeline.ts', 'services/api/wiring.ts')).toEqual(['pipelines-are-not-apps']);
    expect(refusedBy('platform/http/paging.ts', 'services/reads/views.ts')).toEqual(['platform-is-the-bottom']);
    expect(refusedBy('schemas/problem.ts', 'pipelines/groups.ts')).toEqual(['platform-is-the-bottom']);
    expect(refusedBy('platform/bus/port.ts', 'test/support/test-database.ts')).toEqual(['test-support-stays-in-tests']);
    expect(refusedBy('services/api/app.ts', 'pipelines/detect/models/test-kit.ts')).toEqual(['test-support-stays-in-tests', 'services-are-not-pipelines']);
    expect(refusedBy('services/cases/actions.ts', 'pipelines/detect/run.ts')).toEqual(['services-are-not-pipelines']);
    expect(refusedBy('services/detection/library.ts', 'pipelines/detect/run.ts')).toEqual(['services-are-not-pipelines']);
    expect(refusedBy('services/api/auth/authenticate.ts', 'clients/typescript/src/index.ts')).toEqual(['server-uses-the-sdk-through-declared-entries']);
    expect(refusedBy('services/webhooks/worker.ts', 'clients/typescript/src/webhook-signing.ts')).toEqual(['server-uses-the-sdk-through-declared-entries']);
    expect(refusedBy('clients/typescript/src/client.ts', 'schemas/problem.ts')).toEqual(['sdk-is-self-contained']);
  });

  it('lets through the declared paths and test support', () => {
    expect(refusedBy('services/webhooks/worker.ts', 'clients/typescript/src/signing.ts')).toEqual([]);
    expect(refusedBy('services/cli/commands/import.ts', 'clients/typescript/src/index.ts')).toEqual([]);
    expect(refusedBy('services/api/routes/metrics.ts', 'pipelines/groups.ts')).toEqual([]);
    expect(refusedBy('services/cli/commands/run.ts', 'pipelines/detect/pipeline.ts')).toEqual([]);
    expect(refusedBy('pipelines/imports/worker.ts', 'services/imports/map-chunk.ts')).toEqual([]);
    expect(refusedBy('pipelines/detect/run.ts', 'services/detection/posture.ts')).toEqual([]);
    expect(refusedBy('pipelines/detect/episodes.ts', 'services/cases/inbox.ts')).toEqual([]);
    expect(refusedBy('services/console/app.ts', 'platform/http/edge-app.ts')).toEqual([]);
    expect(refusedBy('platform/bus/contract.test-kit.ts', 'test/support/test-database.ts')).toEqual([]);
    expect(refusedBy('services/api/routes/graph.test.ts', 'pipelines/graph/pipeline.ts')).toEqual([]);
  });

  it('no route or renderer of the repository runs SQL itself', () => {
    expect(sqlViolations(queryCalls(repository, sourceFiles(repository))).map((v) => `${v.call.file}:${v.call.line}`)).toEqual([]);
  });

  describe('finding SQL outside stores', () => {
    const root = mkdtempSync(join(tmpdir(), 'boundaries-sql-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const plant = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };

    it('refuses a .query( call in a route or a renderer, and only there', () => {
      plant('services/api/routes/planted.ts', ["const read = async (deps) => {", "  await deps.pool.query('SELECT 1');", '  return db?.query<Row>(`SELECT 2`);', '};'].join('\n'));
      plant('services/cases/render-planted.ts', "export const load = (client) => client.query({ text: 'SELECT 1' });\n");
      plant('services/console/case-exports/routes.ts', "export const load = (db) => db.query('SELECT 1');\n");
      // Not SQL: a request's query string, the word in a string; and not a route: a store, a test.
      plant('services/console/routes/reads-query.ts', "export const q = (request) => request.query.limit ?? 'db.query(';\n");
      plant('services/cases/store.ts', "export const load = (db) => db.query('SELECT 1');\n");
      plant('services/api/routes/planted.test.ts', "await pool.query('SELECT 1');\n");
      const found = sqlViolations(queryCalls(root, sourceFiles(root)));
      expect(found.map((v) => [v.call.file, v.call.line, v.rule]).sort()).toEqual([
        ['services/api/routes/planted.ts', 2, 'no-sql-in-routes-or-renderers'],
        ['services/api/routes/planted.ts', 3, 'no-sql-in-routes-or-renderers'],
        ['services/cases/render-planted.ts', 1, 'no-sql-in-routes-or-renderers'],
        ['services/console/case-exports/routes.ts', 1, 'no-sql-in-routes-or-renderers'],
      ]);
    });
  });

  describe('reading the imports', () => {
    const root = mkdtempSync(join(tmpdir(), 'boundaries-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const plant = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };

    it('sees type-only, re-exported and dynamic imports, and resolves them to files', () => {
      plant('services/api/app.ts', 'export const app = 1;\nexport type App = number;\n');
      plant(
        'services/console/planted.ts',
        [
          "import type { App } from '../api/app.ts';",
          "export { app } from '../api/app.ts';",
          "import { type App as A2 } from '../api/app.ts';",
          "export const later = () => import('../api/app.ts');",
          "import { z } from 'zod';",
          'export type Both = App | A2 | typeof z;',
        ].join('\n'),
      );
      const found = violations(importEdges(root)).filter((v) => v.edge.from === 'services/console/planted.ts');
      expect(found.map((v) => [v.edge.line, v.edge.to, v.edge.typeOnly, v.rule])).toEqual([
        [1, 'services/api/app.ts', true, 'console-is-not-the-api'],
        [3, 'services/api/app.ts', true, 'console-is-not-the-api'],
        [2, 'services/api/app.ts', false, 'console-is-not-the-api'],
        [4, 'services/api/app.ts', false, 'console-is-not-the-api'],
      ]);
    });
  });
});
