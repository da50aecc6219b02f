// Builds the console web app (console/web/dist) when it is missing or older than its sources.
// Used by `npm start` (before `svc up`) and by the browser tests; `npm run console:build` always
// builds. Without vite (an install without devDependencies) it says so and leaves dist as it is.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const WEB_ROOT = fileURLToPath(new URL('.', import.meta.url));
export const WEB_DIST = join(WEB_ROOT, 'dist');

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

export function consoleBuildIsFresh(): boolean {
  const index = join(WEB_DIST, 'index.html');
  if (!existsSync(index)) return false;
  const sources = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json'].map((p) => join(WEB_ROOT, p)).filter((p) => existsSync(p));
  return statSync(index).mtimeMs >= Math.max(...sources.map(newest));
}

let building: Promise<'fresh' | 'built' | 'unavailable'> | undefined;

export function ensureConsoleBuilt(): Promise<'fresh' | 'built' | 'unavailable'> {
  building ??= (async () => {
    if (consoleBuildIsFresh()) return 'fresh';
    let vite: typeof import('vite');
    try {
      vite = await import('vite');
    } catch {
      return 'unavailable';
    }
    await vite.build({ configFile: join(WEB_ROOT, 'vite.config.ts'), logLevel: 'warn' });
    return 'built';
  })();
  return building;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outcome = await ensureConsoleBuilt();
  if (outcome === 'built') console.error('console web app built to console/web/dist');
  if (outcome === 'unavailable') console.error('console web app not built (vite is not installed): /console/ will say so; run npm ci && npm run console:build');
}
