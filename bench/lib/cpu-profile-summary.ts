// Where the time of a V8 CPU profile (node --cpu-prof) goes: self time by function and by where
// the code lives (a package under node_modules, a directory of ours, node's own), and the time
// under a few of our entry points (inclusive). For the notes on the ingest path:
//
//   npx tsx bench/lib/cpu-profile-summary.ts /tmp/prof/CPU.*.cpuprofile [top]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function place(url: string): string {
  if (url === '') return '(vm: gc, idle, program)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return url;
  const ours = url.match(/\/(services|platform|pipelines|schemas|clients|bin)\/(.*)$/);
  if (ours) return `${ours[1]}/${ours[2]}`;
  return url;
}

// Coarse kinds of work, by the innermost frame of a sample outside node's own code (leaf first):
// time in node's streams or a native call (writev) is put with the library that made it; a stack
// of node's code alone is node's HTTP server, sockets and timers. Loading modules is start-up.
const KINDS: Array<[kind: string, test: (place: string, fn: string) => boolean]> = [
  ['PostgreSQL client (pg)', (p) => p.startsWith('npm:pg')],
  ['validation (schemas/, zod)', (p) => p.startsWith('schemas/') || p === 'npm:zod'],
  ['canonical JSON and hashing', (p) => p === 'platform/json/canonical-json.ts'],
  ['signature check (auth)', (p) => p.startsWith('services/api/auth/') || p.startsWith('clients/typescript/')],
  ['body parse and spans', (p) => p === 'platform/http/json-body.ts' || p === 'platform/json/json-spans.ts'],
  ['acceptance (inbox, rate limit, batching)', (p) => /^platform\/(inbox|rate-limit|batching|keys)\//.test(p)],
  ['ingest and validate routes', (p) => p.startsWith('services/api/')],
  ['Fastify', (p) => p === 'npm:fastify' || p === 'npm:find-my-way' || p === 'npm:light-my-request' || p === 'npm:avvio'],
];
const STARTUP = /^node:internal\/modules|^npm:(tsx|esbuild)/;

export function summarise(profile: Profile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    total += dt;
  });
  const fn = new Map<string, number>();
  const where = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const kinds = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || '(anonymous)';
    const at = place(n.callFrame.url);
    const fnKey = `${name}  ${at}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    fn.set(fnKey, (fn.get(fnKey) ?? 0) + us);
    where.set(at, (where.get(at) ?? 0) + us);
    if (name !== '(idle)') {
      const stack: Array<{ at: string; fn: string }> = [];
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const frame = byId.get(cur)!.callFrame;
        stack.push({ at: place(frame.url), fn: frame.functionName });
      }
      const outside = stack.find(({ at }) => !at.startsWith('node:') && !at.startsWith('(vm'));
      const kind =
        name === '(garbage collector)'
          ? 'garbage collection'
          : stack.some(({ at }) => STARTUP.test(at))
            ? 'module loading (start-up)'
            : outside
              ? (KINDS.find(([, test]) => test(outside.at, outside.fn))?.[0] ?? `other: ${outside.at}`)
              : 'node: HTTP server, sockets, timers';
      kinds.set(kind, (kinds.get(kind) ?? 0) + us);
    }
    // Inclusive time per place of ours: each place counted once per sample stack.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur)!.callFrame;
      const p = place(frame.url);
      if (/^(services|platform|pipelines|schemas|clients)\//.test(p) && !seen.has(p)) {
        seen.add(p);
        inclusive.set(p, (inclusive.get(p) ?? 0) + us);
      }
    }
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
  const list = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `  ${pct(us)}  ${k}`).join('\n');
  const busy = [...kinds.values()].reduce((a, b) => a + b, 0);
  return [
    `profile: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle`,
    'not-idle time by kind of work (share of the not-idle time):',
    [...kinds].sort((a, b) => b[1] - a[1]).map(([k, us]) => `  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${(us / 1e6).toFixed(2).padStart(6)} s  ${k}`).join('\n'),
    'self time by place:',
    list(where, top),
    'self time by function:',
    list(fn, top),
    'inclusive time under our modules:',
    list(inclusive, top),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
  process.stdout.write(`${summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(top ?? 25))}\n`);
}
