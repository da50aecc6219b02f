import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The analysts' console web app: built to console/web/dist, served by services/console/static.ts
// under /console/. Decisions: docs/decisions/0019-console-web.md.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or data: modules: the CSP allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
  },
});
