// Time to first render of a 200-node network view in headless Chromium (Debian's, through
// playwright-core). The built app is served as `svc up` serves it (services/console/static.ts);
// the console API is stubbed with a fixed 200-node GraphNetwork (test/browser/fixtures.ts), so
// the figure is the page's own: HTML, script, the request, Cytoscape's layout and first frame.
// Measured from navigation start to the mark the app sets on Cytoscape's first `render` event.
// Baseline in the same run: the first paint of an empty page from the same server.
// Target: median <= 1.5 s.  Usage: npm run bench:console-render [-- runs]
import { launchChromium } from '../test/browser/chromium.ts';
import { fanInNetwork, stubConsoleApi } from '../test/browser/fixtures.ts';
import { serveBuiltConsole } from '../test/browser/serve-built.ts';
import type { ConsolePage } from '../test/browser/page-globals.ts';

const RUNS = Number(process.argv[2] ?? 9);
const TARGET_MS = 1500;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

const server = await serveBuiltConsole((app) => {
  app.get('/bench-empty', async (_request, reply) => reply.type('text/html').send('<!doctype html><title>empty</title><p>empty</p>'));
});
const browser = await launchChromium();
const network = fanInNetwork(200);
const renders: number[] = [];
const baselines: number[] = [];
try {
  // One warm-up of each, not counted (first launch of the renderer process, disk cache).
  for (let i = -1; i < RUNS; i += 1) {
    // A fresh context per run: no HTTP cache, no warm JIT from the previous run.
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    await stubConsoleApi(page, network);
    await page.goto(`${server.base}/bench-empty`);
    // The paint entries by name: Node's types (this program's) know no 'paint' entry type.
    await page.waitForFunction(() => performance.getEntriesByName('first-paint').length + performance.getEntriesByName('first-contentful-paint').length > 0);
    const paint = await page.evaluate(() => (performance.getEntriesByName('first-paint')[0] ?? performance.getEntriesByName('first-contentful-paint')[0]!).startTime);
    await page.goto(`${server.base}/console/network/hub-p`);
    await page.waitForSelector('#cy[data-ready=true]', { timeout: 30_000 });
    const rendered = await page.evaluate(() => performance.getEntriesByName('svc:network:first-render')[0]!.duration);
    const nodes = await page.evaluate(() => (globalThis as ConsolePage).__svcNetwork!.nodes.length);
    if (nodes !== 200) throw new Error(`drew ${nodes} nodes, not 200`);
    if (i >= 0) {
      renders.push(rendered);
      baselines.push(paint);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await server.app.close();
}
const median = quantile(renders, 0.5);
const baseline = quantile(baselines, 0.5);
const result = {
  runs: RUNS,
  nodes: 200,
  edges: network.edges.length,
  first_render_ms: { median: Math.round(median), p95: Math.round(quantile(renders, 0.95)), min: Math.round(Math.min(...renders)), max: Math.round(Math.max(...renders)) },
  baseline_empty_page_first_paint_ms: { median: Math.round(baseline), p95: Math.round(quantile(baselines, 0.95)) },
  ratio_to_baseline: Number((median / baseline).toFixed(1)),
  target_ms: TARGET_MS,
  meets_target: median <= TARGET_MS,
};
console.log(JSON.stringify(result, null, 2));
if (!result.meets_target) process.exitCode = 1;
