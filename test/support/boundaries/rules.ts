import type { ImportEdge } from './import-graph.ts';
import type { QueryCall } from './query-calls.ts';

// The layers of the repository and what each may import (decision 0041). Paths are globs over
// repository-relative paths: `**` any number of folders, `*` part of one name. A rule forbids its
// `to` for files in `from` (less `exceptFrom`); `allow` declares the exceptions, each with its why.
interface Allowance {
  from?: string;
  to: string;
  why: string;
}

export interface BoundaryRule {
  name: string;
  why: string;
  from: readonly string[];
  exceptFrom?: readonly string[];
  to: readonly string[];
  exceptTo?: readonly string[];
  allow?: readonly Allowance[];
}

// Test support: whatever only tests run. A kit of helpers that a test next to the code imports
// is named test-kit.ts or *.test-kit.ts so it is known as test support where it lives.
const TEST_SUPPORT = ['test/**', '**/*.test.ts', '**/*.test-kit.ts', '**/test-kit.ts', 'clients/typescript/test/**'];
// Benchmarks are run by hand and never shipped; they build their worlds from the test fixtures.
const DEV_TOOLS = ['bench/**'];
const SERVER = ['bin/**', 'platform/**', 'schemas/**', 'services/**', 'pipelines/**', 'infra/**'];

const RULES: readonly BoundaryRule[] = [
  {
    name: 'test-support-stays-in-tests',
    why: 'production code must not depend on test support',
    from: ['**'],
    exceptFrom: [...TEST_SUPPORT, ...DEV_TOOLS],
    to: TEST_SUPPORT,
  },
  {
    name: 'console-is-not-the-api',
    why: 'the console and the /v1 API are separate apps; what both need lives in a capability or platform/http',
    from: ['services/console/**'],
    to: ['services/api/**'],
  },
  {
    name: 'api-is-not-the-console',
    why: 'the console and the /v1 API are separate apps; what both need lives in a capability or platform/http',
    from: ['services/api/**'],
    to: ['services/console/**'],
  },
  {
    name: 'services-are-not-pipelines',
    why: 'request-time code lives in its capability under services/; pipelines are consumers and workers',
    from: ['services/**'],
    exceptFrom: TEST_SUPPORT,
    to: ['pipelines/**'],
    allow: [
      { to: 'pipelines/groups.ts', why: 'the consumer group specs, which metrics and status report on' },
      { from: 'services/cli/**', to: 'pipelines/*/pipeline.ts', why: '`svc run` is the composition root that starts the consumers' },
      { from: 'services/cli/**', to: 'pipelines/imports/worker.ts', why: '`svc run` starts the import worker' },
    ],
  },
  {
    name: 'pipelines-are-not-apps',
    why: 'a consumer depends on capabilities and their stores, never on an HTTP app',
    from: ['pipelines/**'],
    exceptFrom: TEST_SUPPORT,
    to: ['services/api/**', 'services/console/**', 'services/cli/**'],
  },
  {
    name: 'platform-is-the-bottom',
    why: 'platform/ is shared by every capability and depends on none',
    from: ['platform/**', 'schemas/**'],
    exceptFrom: TEST_SUPPORT,
    to: ['services/**', 'pipelines/**', 'clients/**'],
  },
  {
    name: 'server-uses-the-sdk-through-declared-entries',
    why: 'the SDK is published on its own; the server imports its signing from one declared path',
    from: SERVER,
    exceptFrom: TEST_SUPPORT,
    to: ['clients/**'],
    allow: [
      { to: 'clients/typescript/src/signing.ts', why: 'request and webhook signing, shared by the server and the SDK' },
      { from: 'services/cli/**', to: 'clients/typescript/src/index.ts', why: 'the CLI is a client of the API and uses the SDK as one' },
    ],
  },
  {
    name: 'sdk-is-self-contained',
    why: 'the SDK is published on its own: its source imports nothing outside its package',
    from: ['clients/typescript/src/**'],
    exceptFrom: TEST_SUPPORT,
    to: ['**'],
    exceptTo: ['clients/typescript/src/**'],
  },
];

export interface Violation {
  rule: string;
  why: string;
  edge: ImportEdge;
}

// Files that run no SQL themselves (issue 33): a route or a renderer calls the store module of
// the aggregate it reads or writes, so every statement lives in one place.
export interface SqlFreeRule {
  name: string;
  why: string;
  files: readonly string[];
  exceptFiles: readonly string[];
}

const SQL_FREE: SqlFreeRule = {
  name: 'no-sql-in-routes-or-renderers',
  why: 'SQL lives in the store module of the aggregate it reads or writes; routes and renderers call it',
  files: ['**/routes/**', '**/routes.ts', '**/render*.ts'],
  exceptFiles: TEST_SUPPORT,
};

export interface SqlViolation {
  rule: string;
  why: string;
  call: QueryCall;
}

export function sqlViolations(calls: readonly QueryCall[], rule: SqlFreeRule = SQL_FREE): SqlViolation[] {
  const files = matcher(rule.files);
  const exceptFiles = matcher(rule.exceptFiles);
  return calls.filter((call) => files(call.file) && !exceptFiles(call.file)).map((call) => ({ rule: rule.name, why: rule.why, call }));
}

export function violations(edges: readonly ImportEdge[], rules: readonly BoundaryRule[] = RULES): Violation[] {
  const compiled = rules.map((rule) => ({
    rule,
    from: matcher(rule.from),
    exceptFrom: matcher(rule.exceptFrom ?? []),
    to: matcher(rule.to),
    exceptTo: matcher(rule.exceptTo ?? []),
    allow: (rule.allow ?? []).map((a) => ({ from: matcher(a.from ? [a.from] : ['**']), to: matcher([a.to]) })),
  }));
  return edges.flatMap((edge) =>
    compiled
      .filter((c) => c.from(edge.from) && !c.exceptFrom(edge.from) && c.to(edge.to) && !c.exceptTo(edge.to))
      .filter((c) => !c.allow.some((a) => a.from(edge.from) && a.to(edge.to)))
      .map((c) => ({ rule: c.rule.name, why: c.rule.why, edge })),
  );
}

function matcher(globs: readonly string[]): (path: string) => boolean {
  const patterns = globs.map(globPattern);
  return (path) => patterns.some((pattern) => pattern.test(path));
}

function globPattern(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (glob.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (glob.startsWith('**', i)) {
      source += '.*';
      i += 1;
    } else if (char === '*') source += '[^/]*';
    else source += char.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
