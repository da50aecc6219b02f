import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// The analysts' console web app (console/web, built by Vite to console/web/dist) served at
// /console/: files by exact name, index.html for every other /console/* path (the SPA's routes);
// /console/v1/* is the API's and never falls back. Decisions: docs/decisions/0019-console-web.md.

export const DEFAULT_WEB_DIST = fileURLToPath(new URL('../../console/web/dist/', import.meta.url));

// Scripts, styles, images and API calls from this origin only; no inline script or style
// attribute, no plug-ins, no framing, no <base> rewriting, forms post here only.
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
// Vite names what it emits under assets/ with a content hash: such a file never changes.
const HASHED = /^assets\/.+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

interface Asset {
  body: Buffer;
  type: string;
  immutable: boolean;
}

function scan(dist: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const rel = relative(dist, path).split(sep).join('/');
        files.set(rel, { body: readFileSync(path), type: TYPES[extname(name)] ?? 'application/octet-stream', immutable: HASHED.test(rel) });
      }
    }
  };
  if (existsSync(join(dist, 'index.html'))) walk(dist);
  return files;
}

export async function registerConsoleWeb(app: FastifyInstance, options: { dist?: string } = {}): Promise<void> {
  const dist = options.dist ?? DEFAULT_WEB_DIST;
  // Read once: a build made while the service runs is picked up only while none was there.
  let files = scan(dist);

  const send = (reply: FastifyReply, asset: Asset) => {
    reply.header('Content-Security-Policy', CONSOLE_CSP);
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-store');
    return reply.type(asset.type).send(asset.body);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.url.split('?')[0] ?? '').replace(/^\/console\/?/, '');
    // An unknown API path is the API's 404, never the app.
    if (path === 'v1' || path.startsWith('v1/')) return reply.callNotFound();
    if (files.size === 0) files = scan(dist);
    const index = files.get('index.html');
    if (!index) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console web app is not built: run `npm run console:build` (npm start does it when vite is installed).\n');
    }
    let name: string;
    try {
      name = decodeURIComponent(path);
    } catch {
      name = '';
    }
    const file = files.get(name);
    if (file && name !== 'index.html') return send(reply, file);
    // A missing hashed asset is a 404 (a stale page asking for an old build), not the app.
    if (name.startsWith('assets/')) return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
    return send(reply, index);
  };

  app.get('/console', handler);
  app.get('/console/', handler);
  app.get('/console/*', handler);
}
