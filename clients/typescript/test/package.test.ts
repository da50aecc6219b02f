// The SDK is a package of its own: it builds alone, imports nothing from the service's code, its
// exports resolve in the built output, and its generated types match the service's schemas.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED_CATALOG_PATH, GENERATED_TYPES_PATH, generateApiTypes, generateWebhookCatalog } from '../scripts/api-types.ts';
import * as source from '../src/index.ts';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const SRC_DIR = join(PACKAGE_DIR, 'src');
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; default: string }>;
  files: string[];
  dependencies?: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the generated types', () => {
  it('are what the service\'s schemas generate now (run `npm run sdk:types` after changing a schema)', async () => {
    expect(readFileSync(GENERATED_TYPES_PATH, 'utf8')).toBe(await generateApiTypes());
    expect(readFileSync(GENERATED_CATALOG_PATH, 'utf8')).toBe(generateWebhookCatalog());
  });
});

describe('the package sources', () => {
  it('import only each other and Node built-ins, and the package has no runtime dependencies', () => {
    for (const file of sourceFiles(SRC_DIR)) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+['"]([^'"]+)['"]/gm)) {
        if (specifier!.startsWith('node:')) continue;
        expect(specifier, `${relative(PACKAGE_DIR, file)} imports ${specifier}`).toMatch(/^\.\.?\//);
        expect(resolve(file, '..', specifier!).startsWith(SRC_DIR), `${relative(PACKAGE_DIR, file)} reaches outside src: ${specifier}`).toBe(true);
      }
    }
    expect(manifest.dependencies ?? {}).toEqual({});
  });
});

describe('the built package', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-client-'));
    await promisify(execFile)(process.execPath, [TSC, '-p', join(PACKAGE_DIR, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')]);
    cpSync(join(PACKAGE_DIR, 'package.json'), join(dir, 'package.json'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has every export target, with its types, inside the published files', () => {
    for (const [entry, target] of Object.entries(manifest.exports)) {
      const paths = typeof target === 'string' ? [target] : [target.types, target.default];
      for (const path of paths) {
        expect(existsSync(join(dir, path)), `${entry} → ${path}`).toBe(true);
        // npm always publishes package.json; everything else must be under `files`.
        if (path !== './package.json') expect(manifest.files.some((f) => path.replace(/^\.\//, '').startsWith(f)), `${path} is published`).toBe(true);
      }
    }
  });

  // A customer's project with the package installed under its name.
  function consumer(files: Record<string, string>): string {
    const project = mkdtempSync(join(tmpdir(), 'svc-client-consumer-'));
    const installed = join(project, 'node_modules', ...manifest.name.split('/'));
    cpSync(dir, installed, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
    return project;
  }
  const USES = `import { SvcClient, type BatchItem } from '${manifest.name}';
import { constructWebhookEvent } from '${manifest.name}/webhooks';
export const client: SvcClient = new SvcClient({ baseUrl: 'http://127.0.0.1', keyId: 'k', secret: 's' });
export const item: BatchItem | undefined = undefined;
export const verify: typeof constructWebhookEvent = constructWebhookEvent;
`;

  it.each([
    ['node16', ['--module', 'node16', '--moduleResolution', 'node16']],
    ['nodenext', ['--module', 'nodenext', '--moduleResolution', 'nodenext']],
    ['bundler', ['--module', 'esnext', '--moduleResolution', 'bundler']],
  ])('type-checks in a project with moduleResolution %s', async (_name, flags) => {
    const project = consumer({ 'use.mts': USES });
    try {
      const file = 'use.mts';
      await promisify(execFile)(process.execPath, [TSC, '--noEmit', '--strict', '--skipLibCheck', 'false', '--types', 'node', '--typeRoots', join(PACKAGE_DIR, '../../node_modules/@types'), ...flags, join(project, file)], { cwd: project });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 120_000);

  it('loads with require() from CommonJS, and its source maps carry their sources', async () => {
    const project = consumer({ 'use.cjs': `const { SvcClient } = require('${manifest.name}'); const { constructWebhookEvent } = require('${manifest.name}/webhooks'); process.stdout.write(typeof SvcClient + ' ' + typeof constructWebhookEvent);` });
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [join(project, 'use.cjs')], { cwd: project });
      expect(stdout).toBe('function function');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
    const map = JSON.parse(readFileSync(join(dir, 'dist', 'index.js.map'), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
    expect(map.sourcesContent?.[0]).toBe(readFileSync(join(SRC_DIR, 'index.ts'), 'utf8'));
  });

  it('runs as JavaScript, and signs exactly as the sources do', async () => {
    const built = (await import(pathToFileURL(join(dir, 'dist', 'index.js')).href)) as typeof source;
    expect(typeof built.SvcClient).toBe('function');
    const request = { keyId: 'svc_test_k', secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ', method: 'POST', target: '/v1/parties?b=2&a=1', body: '{"x":1}', timestamp: 1_800_000_000, nonce: 'n-1' };
    expect(built.signRequest(request)).toEqual(source.signRequest(request));
    const webhooks = (await import(pathToFileURL(join(dir, 'dist', 'webhooks.js')).href)) as typeof import('../src/webhooks.ts');
    expect(webhooks.WEBHOOK_CLASSIFICATIONS['alert.opened']).toBe('restricted_aml');
  });
});
