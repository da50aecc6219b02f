// The scale-out engines on this machine, without Docker: start what is not running yet, say what
// runs, stop what we started. Used by `svc engines up|down|status` (detached servers that outlive
// the command) and by the test set-up (servers tied to the test run). Each engine is a small
// module (types.ts's LocalEngineSpec); this file owns everything they share: free ports on
// 127.0.0.1, the launch, polling readiness with a deadline, state.json, stopping.
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { engineCatalog } from './catalog.ts';
import { freePort, portTaken } from './prerequisites.ts';
import { isOurs, launch, residentBytes, stopProcess, type StopGrace, type StopReport } from './processes.ts';
import { enginesRoot, readState, withStateLock, writeState, type EngineRecord, type EnginesState } from './state.ts';
import type { EngineContext, EngineName, EnginePorts, LocalEngineSpec } from './types.ts';

export type { EngineName } from './types.ts';

// How one engine's stop ended.
export type StopOutcome = StopReport['outcome'];

const DEFAULT_READY_TIMEOUT_MS = 120_000;
// Up to 20 s doing nothing after SIGTERM, 2 min while it still works (processes.ts StopGrace);
// an engine may ask for more (LocalEngineSpec.stopGrace).
const DEFAULT_STOP_GRACE: StopGrace = { quietMs: 20_000, maxMs: 120_000 };

export interface EnginesOptions {
  // SVC_DATA_DIR: the engines live in <dataDir>/engines/<name>/.
  dataDir: string;
  // SVC_ENGINES_CACHE: downloads, shared by every data directory (defaultCacheDir()).
  cacheDir?: string;
  // Which engines; all of them when unset.
  engines?: EngineName[];
  // Progress lines (stderr in the CLI).
  log?: (line: string) => void;
}

export interface StartOptions extends EnginesOptions {
  // true (the CLI, the default): the servers outlive this process. false (tests): the kernel
  // kills them should this process die without stopping them.
  detached?: boolean;
}

export interface EngineStatus {
  name: EngineName;
  version: string;
  state: 'up' | 'not answering' | 'down';
  pid?: number;
  ports: EnginePorts;
  // What reaches it (empty when down).
  env: Record<string, string>;
  rssBytes?: number;
}

export interface StartedEngines {
  // What the service needs to reach every requested engine (KAFKA_BROKERS=…), whether it ran
  // before or was started now.
  env: Record<string, string>;
  engines: EngineStatus[];
  // Stops only the engines this call started.
  stop: (options?: { graceMs?: number }) => Promise<void>;
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.SVC_ENGINES_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'svc-engines'));
}

export async function startLocalEngines(options: StartOptions): Promise<StartedEngines> {
  const dataDir = resolve(options.dataDir);
  const cacheDir = resolve(options.cacheDir ?? defaultCacheDir());
  const log = options.log ?? (() => {});
  const specs = await selected(options.engines);
  const started: LocalEngineSpec[] = [];
  await withStateLock(dataDir, async () => {
    await mkdir(cacheDir, { recursive: true });
    const state = await readState(dataDir);
    const readiness = new Map<EngineName, Promise<void>>();
    try {
      // Prepared one after the other (two Maven runs on one local repository would trip over each
      // other), each launched as soon as it is prepared: the JVMs start while the next downloads.
      for (const spec of specs) {
        for (const dependency of spec.dependsOn ?? []) await readiness.get(dependency);
        const dir = join(enginesRoot(dataDir), spec.name);
        const record = state.engines[spec.name];
        if (record?.process && (await isOurs(record.process, dir))) {
          log(`${spec.name}: already running (pid ${record.process.pid})`);
          readiness.set(spec.name, handled(waitReady(spec, record, dir)));
          continue;
        }
        const ports = await choosePorts(spec, record);
        const ctx: EngineContext = { dataDir: dir, cacheDir, log: (line) => log(`${spec.name}: ${line}`) };
        await mkdir(dir, { recursive: true });
        const plan = await spec.prepare(ctx, ports);
        const running = await launch(plan, dir, { detached: options.detached ?? true });
        const next: EngineRecord = { version: spec.version, ports, process: { ...running, startedAt: new Date().toISOString() }, logFile: plan.logFile };
        state.engines[spec.name] = next;
        started.push(spec);
        await writeState(dataDir, state);
        log(`${spec.name}: started ${spec.version} (pid ${running.pid}), waiting until it answers`);
        readiness.set(spec.name, handled(waitReady(spec, next, dir).then(async () => {
          await spec.afterReady?.(ports, ctx);
          next.version = (await spec.detectVersion?.(ports)) ?? next.version;
          // Addresses only: an engine's exports may carry a password, which never reaches a log.
          log(`${spec.name}: up on ${Object.entries(spec.exports(ports, ctx)).filter(([name]) => !/PASSWORD|SECRET|TOKEN/.test(name)).map(([, value]) => value).join(' ')}`);
        })));
      }
      await firstFailure([...readiness.values()]);
      await writeState(dataDir, state);
    } catch (error) {
      // All or nothing: what this call started goes again, so a retry starts from the same place.
      await stopRecorded(dataDir, state, started, 5_000, log).catch(() => undefined);
      await writeState(dataDir, state).catch(() => undefined);
      throw error;
    }
  });
  const engines = await statusOf(dataDir, cacheDir, specs);
  const env = Object.assign({}, ...engines.map((engine) => engine.env)) as Record<string, string>;
  const stop = async (stopOptions?: { graceMs?: number }) => {
    if (started.length === 0) return;
    await stopLocalEngines({ dataDir, engines: started.map((spec) => spec.name), log, graceMs: stopOptions?.graceMs });
  };
  return { env, engines, stop };
}

// Stops the recorded engines that are still our processes, side by side: SIGTERM, then SIGKILL
// when one has not ended within its grace (graceMs, when given, for every engine: a test's data is
// thrown away). Ports stay recorded for the next `up`.
export async function stopLocalEngines(options: EnginesOptions & { graceMs?: number }): Promise<{ name: EngineName; outcome: StopOutcome }[]> {
  const dataDir = resolve(options.dataDir);
  const specs = await selected(options.engines);
  return withStateLock(dataDir, async () => {
    const state = await readState(dataDir);
    const outcomes = await stopRecorded(dataDir, state, specs, options.graceMs, options.log ?? (() => {}));
    await writeState(dataDir, state);
    return outcomes;
  });
}

export async function localEngineStatus(options: EnginesOptions): Promise<EngineStatus[]> {
  return statusOf(resolve(options.dataDir), resolve(options.cacheDir ?? defaultCacheDir()), await selected(options.engines));
}

// The caller holds the lock and writes the state.
async function stopRecorded(dataDir: string, state: EnginesState, specs: LocalEngineSpec[], graceMs: number | undefined, log: (line: string) => void): Promise<{ name: EngineName; outcome: StopOutcome }[]> {
  return Promise.all(
    specs.map(async (spec) => {
      const record = state.engines[spec.name];
      if (!record?.process) return { name: spec.name, outcome: 'not running' };
      const grace = graceMs ?? spec.stopGrace ?? DEFAULT_STOP_GRACE;
      const report = await stopProcess(record.process, join(enginesRoot(dataDir), spec.name), grace);
      // One that outlived SIGKILL stays recorded, so status and the next down still find it.
      if (report.outcome !== 'still running') delete record.process;
      log(`${spec.name}: ${stopLine(report, grace, record.process?.pid)}`);
      return { name: spec.name, outcome: report.outcome };
    }),
  );
}

// What a stop did, in the operator's words: how long it took, and why it had to kill.
export function stopLine(report: StopReport, grace: number | StopGrace, pid?: number): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const { quietMs, maxMs } = typeof grace === 'number' ? { quietMs: grace, maxMs: grace } : grace;
  const why = report.killedBecause === 'idle' ? `did nothing for ${seconds(quietMs)} after SIGTERM` : `was still working ${seconds(maxMs)} after SIGTERM`;
  switch (report.outcome) {
    case 'not running':
      return 'not running';
    case 'stopped':
      return `stopped in ${seconds(report.ms)}`;
    case 'killed':
      return `killed (SIGKILL): it ${why}; it may recover its data on the next start`;
    case 'still running':
      return `still running after SIGKILL (pid ${pid}): it ${why}; stop it by hand`;
  }
}

async function statusOf(dataDir: string, cacheDir: string, specs: LocalEngineSpec[]): Promise<EngineStatus[]> {
  const state = await readState(dataDir);
  return Promise.all(
    specs.map(async (spec): Promise<EngineStatus> => {
      const record = state.engines[spec.name];
      const dir = join(enginesRoot(dataDir), spec.name);
      if (!record?.process || !(await isOurs(record.process, dir))) {
        return { name: spec.name, version: record?.version ?? spec.version, state: 'down', ports: record?.ports ?? {}, env: {} };
      }
      return {
        name: spec.name,
        version: record.version,
        state: (await spec.ready(record.ports)) ? 'up' : 'not answering',
        pid: record.process.pid,
        ports: record.ports,
        env: spec.exports(record.ports, { dataDir: dir, cacheDir, log: () => {} }),
        rssBytes: await residentBytes(record.process.pid),
      };
    }),
  );
}

async function selected(names: EngineName[] | undefined): Promise<LocalEngineSpec[]> {
  const catalog = await engineCatalog();
  if (!names) return catalog;
  const unknown = names.filter((name) => !catalog.some((spec) => spec.name === name));
  if (unknown.length > 0) throw new Error(`unknown engine ${unknown.join(', ')} (known here: ${catalog.map((spec) => spec.name).join(', ')})`);
  return catalog.filter((spec) => names.includes(spec.name));
}

// The ports recorded for the engine (the addresses an operator already evaluated), else free ones.
// A recorded port now held by another program is an error naming it: moving silently would leave
// every evaluated export pointing at that other program.
async function choosePorts(spec: LocalEngineSpec, record: EngineRecord | undefined): Promise<EnginePorts> {
  const ports: EnginePorts = {};
  for (const name of spec.portNames) {
    const recorded = record?.ports[name];
    if (recorded !== undefined) {
      if (await portTaken(recorded)) {
        throw new Error(`${spec.name}: port 127.0.0.1:${recorded} (${name}, recorded in state.json) is taken by another program: stop it, or delete ${spec.name}'s "ports" in state.json to get new ones`);
      }
      ports[name] = recorded;
    } else {
      let port = await freePort();
      while (Object.values(ports).includes(port)) port = await freePort();
      ports[name] = port;
    }
  }
  return ports;
}

// Polls the engine's probe until it answers; fails at once, with the end of its log, should the
// process end meanwhile.
async function waitReady(spec: LocalEngineSpec, record: EngineRecord, dir: string): Promise<void> {
  const timeoutMs = spec.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await spec.ready(record.ports)) return;
    if (record.process && !(await isOurs(record.process, dir))) {
      throw new Error(`${spec.name} exited before it answered: ${await tail(record.logFile)} (logs in ${dir})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${spec.name} did not answer within ${Math.round(timeoutMs / 1000)} s: ${await tail(record.logFile)} (logs in ${dir})`);
}

async function tail(file: string | undefined): Promise<string> {
  const text = file ? await readFile(file, 'utf8').catch(() => '') : '';
  return text.trim().split('\n').slice(-5).join(' | ') || 'nothing in its log';
}

// A readiness promise may reject before anyone awaits it (a later engine's prepare failed first):
// marked handled here; its failure still reaches firstFailure.
function handled(promise: Promise<void>): Promise<void> {
  promise.catch(() => undefined);
  return promise;
}

// Waits for every promise, then throws the first failure (the others have said theirs in the log).
async function firstFailure(promises: Promise<void>[]): Promise<void> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
}
