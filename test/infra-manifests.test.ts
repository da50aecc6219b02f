// The operator manifests under infra/ (compose, Kubernetes, Kafka topics, the pipeline manifest)
// checked against the code, since nothing here can run them (no Docker, no kubectl): they parse,
// validate, set only variables of the config schema, run only commands the CLI has, name only
// defined topics, and every kustomize reference resolves. Each check also runs on a broken copy
// and must report it.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, normalize, relative, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { planTopics, parseArguments } from '../infra/kafka/create-topics.ts';
import { DEFAULT_PARTITIONS, KafkaNames } from '../platform/bus/kafka/topics.ts';
import { neo4jEngine } from '../platform/local-engines/neo4j.ts';
import { KAFKA, SCHEMA_REGISTRY } from '../platform/local-engines/versions.ts';
import { PARTITIONS } from '../platform/bus/postgres-log.ts';
import type { ConsumeOptions } from '../platform/bus/port.ts';
import { configSchema, loadConfig } from '../platform/config.ts';
import type { Pool } from '../platform/postgres/pool.ts';
import { DETECTION_NODE_OPTIONS } from '../pipelines/detect/node-options.ts';
import { CONSUMER_GROUPS } from '../pipelines/groups.ts';
import { BUS_TOPICS } from '../schemas/bus/avro/index.ts';
import { parsePipelinesManifest, type PipelinesManifest } from '../schemas/infra/pipelines.ts';
import { parseTopicsManifest, type TopicsManifest } from '../schemas/infra/topics.ts';
import {
  checkManifestAgainstCode,
  DEFAULT_PIPELINES_MANIFEST,
  manifestBus,
  pipelineStarters,
  PIPELINES,
  PROCESSORS,
  processorCommand,
  type Pipeline,
} from '../services/cli/commands/run.ts';

const ROOT = resolve(import.meta.dirname, '..');
const rel = (path: string) => relative(ROOT, path);
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

const clone = <T>(value: T): T => structuredClone(value);

// ---------------------------------------------------------------------------------------------
// The files, as a map of repository-relative path → text, so broken copies are cheap to make.

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}
type Files = Map<string, string>;
const INFRA_FILES: Files = new Map(filesUnder('infra').map((path) => [path, read(path)]));
const isDir = (files: Files, dir: string) => [...files.keys()].some((path) => path.startsWith(`${dir}/`));

const yamlDocs = (text: string): unknown[] =>
  parseAllDocuments(text, { merge: true })
    .map((doc) => doc.toJS())
    .filter((doc) => doc !== null && doc !== undefined);

// ---------------------------------------------------------------------------------------------
// What the code defines, read from the code.

const CONFIG_KEYS = new Set(Object.keys(configSchema.shape));

// The CLI's commands, from services/cli/main.ts's dispatch: the top-level `case` labels, the
// `svc run` subcommands it compares rest[0] with, and the pipelines it accepts (run.ts PIPELINES).
const MAIN_SOURCE = read('services/cli/main.ts');
const DISPATCH = MAIN_SOURCE.slice(MAIN_SOURCE.indexOf('async function main('));
const CLI_COMMANDS = [...DISPATCH.matchAll(/case '([^']+)':/g)].map((m) => m[1]!);
const RUN_SUBCOMMANDS = [...DISPATCH.matchAll(/rest\[0\] === '([^']+)'/g)].map((m) => m[1]!);

// The API's health routes, from services/api/routes/health.ts, and the console's, from
// services/console/app.ts (served on SVC_CONSOLE_PORT, not PORT).
const API_HEALTH_ROUTES = [...read('services/api/routes/health.ts').matchAll(/\.get\(\s*'(\/[^']+)'/g)].map((m) => m[1]!);
const CONSOLE_HEALTH_ROUTES = [...read('services/console/app.ts').matchAll(/app\.get\('(\/console\/v1\/(?:health|ready))'/g)].map((m) => m[1]!);
const HEALTH_ROUTES = [...API_HEALTH_ROUTES, ...CONSOLE_HEALTH_ROUTES];
// The port a health route is served on, given a process's environment.
const DEFAULT_CONSOLE_PORT = String(configSchema.shape.SVC_CONSOLE_PORT.parse(undefined));
const listenPortFor = (path: string | undefined, env: Record<string, string>): { name: string; value: string | undefined } =>
  path !== undefined && CONSOLE_HEALTH_ROUTES.includes(path)
    ? { name: 'SVC_CONSOLE_PORT', value: env.SVC_CONSOLE_PORT ?? DEFAULT_CONSOLE_PORT }
    : { name: 'PORT', value: env.PORT };

// The image's entrypoint and default command, from the Dockerfile (exec form).
const DOCKERFILE = read('Dockerfile');
const dockerInstruction = (name: string): string[] => {
  const match = new RegExp(`^${name}\\s+(\\[.*\\])\\s*$`, 'm').exec(DOCKERFILE);
  if (!match) throw new Error(`Dockerfile has no exec-form ${name}`);
  return JSON.parse(match[1]!) as string[];
};
const ENTRYPOINT = dockerInstruction('ENTRYPOINT');
const DEFAULT_CMD = dockerInstruction('CMD');

// Tables of the PostgreSQL migrations.
const TABLES = new Set(
  filesUnder('infra/postgres').flatMap((path) => [...read(path).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].map((m) => m[1]!)),
);

// Scripts an image of ours may run besides the CLI, and how each checks its arguments.
const SCRIPTS: Record<string, (args: string[]) => void> = {
  'infra/kafka/create-topics.ts': (args) => void parseArguments(args),
};

// ---------------------------------------------------------------------------------------------
// Checks. Each returns the problems it finds; an empty list is a pass.

// One argv run in an image of ours: `node bin/svc.js …` must be a command of the CLI, a script
// must exist and accept its arguments, `node -e` may only probe a health route, and `sleep` only
// wait (preStop).
function checkArgv(argv: string[], where: string, files: Files = INFRA_FILES): string[] {
  const [program, ...rest] = argv;
  const shown = `${where}: ${argv.join(' ')}`;
  if (program === 'node' && rest[0] === 'bin/svc.js') return checkSvcArgs(rest.slice(1), shown);
  if (program === 'node' && rest[0] === '--import' && rest[1] === 'tsx') {
    const script = rest[2] ?? '';
    const check = SCRIPTS[script];
    if (!check) return [`${shown}: not a script of this repository's jobs`];
    try {
      read(script);
      check(rest.slice(3));
    } catch (error) {
      return [`${shown}: ${(error as Error).message}`];
    }
    // A file argument must be a file of the repository (the image's working directory is its root).
    return rest
      .slice(3)
      .filter((arg) => arg.endsWith('.yaml') && !arg.startsWith('/'))
      .filter((arg) => !files.has(arg))
      .map((arg) => `${shown}: ${arg} does not exist`);
  }
  if (program === 'node' && rest[0] === '-e') {
    const path = /https?:\/\/[^/'"]+(\/[^'"]*)/.exec(rest[1] ?? '')?.[1];
    return path && HEALTH_ROUTES.includes(path) ? [] : [`${shown}: node -e is only for probing a health route (${HEALTH_ROUTES.join(', ')})`];
  }
  if (program === 'sleep' && rest.length === 1 && /^\d+$/.test(rest[0]!)) return [];
  return [`${shown}: not a command of this service`];
}

function checkSvcArgs(args: string[], shown: string): string[] {
  const [command, ...rest] = args;
  if (!command || !CLI_COMMANDS.includes(command)) return [`${shown}: svc has no command ${command ?? '(none)'} (${CLI_COMMANDS.join(', ')})`];
  if (command === 'run') {
    const [sub, name] = rest;
    if (!sub || !RUN_SUBCOMMANDS.includes(sub)) return [`${shown}: svc run has no ${sub ?? '(nothing)'} (${RUN_SUBCOMMANDS.join(', ')})`];
    if (sub === 'pipeline' && (rest.length !== 2 || !PIPELINES.includes(name as Pipeline))) return [`${shown}: svc run pipeline takes one of ${PIPELINES.join(', ')}`];
    if (sub !== 'pipeline' && rest.length !== 1) return [`${shown}: svc run ${sub} takes no arguments`];
  }
  return rest.filter((arg) => arg.startsWith('--') && !MAIN_SOURCE.includes(`${arg}`)).map((flag) => `${shown}: the CLI knows no option ${flag}`);
}

// NODE_OPTIONS is node's own, checked by checkNodeOptions.
function checkEnvNames(names: string[], where: string): string[] {
  return names.filter((name) => !CONFIG_KEYS.has(name) && name !== 'NODE_OPTIONS').map((name) => `${where}: ${name} is not a variable of platform/config.ts`);
}

// A process that runs detection starts with detection's node options (NODE_OPTIONS), and no other
// process sets any.
const DETECTION_NODE_OPTIONS_TEXT = DETECTION_NODE_OPTIONS.join(' ');
function checkNodeOptions(env: Record<string, string>, argv: string[], where: string): string[] {
  const detects = [processorCommand('detect').join(' '), 'up'].includes(svcArgs(argv) ?? '');
  if (detects && env.NODE_OPTIONS !== DETECTION_NODE_OPTIONS_TEXT) return [`${where}: runs detection without NODE_OPTIONS=${DETECTION_NODE_OPTIONS_TEXT}`];
  if (!detects && env.NODE_OPTIONS !== undefined) return [`${where}: sets NODE_OPTIONS, which only detection's processes take`];
  return [];
}

// A complete environment must load: values valid, engine requirements met, the master key given.
function checkLoads(env: Record<string, string>, where: string): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    return [`${where}: ${(error as Error).message.replace(/\n\s*/g, '; ')}`];
  }
}

// ----- topics

function topicsNamedByPipelines(manifest: PipelinesManifest): string[] {
  return Object.values(manifest.processors).flatMap((p) => (p.kind === 'consumer' ? p.topics : []));
}

// The topics the code names on Kafka (platform/bus/kafka, no namespace): the bus topics the relay
// fills and the relay's dead-letter topic.
const KAFKA_NAMES = new KafkaNames();
const topicsNamedByCode = () => [...BUS_TOPICS.map((t) => KAFKA_NAMES.topic(t)), KAFKA_NAMES.relayDeadLetterTopic()];

function checkTopics(topics: TopicsManifest, pipelines: PipelinesManifest): string[] {
  const problems: string[] = [];
  const defined = new Set(topics.topics.map((t) => t.name));
  const named = new Set([...topicsNamedByPipelines(pipelines), ...topicsNamedByCode()]);
  for (const name of named) if (!defined.has(name)) problems.push(`topic ${name} is named but not defined in infra/kafka/topics.yaml`);
  for (const name of defined) if (!named.has(name)) problems.push(`topic ${name} is defined but neither the code nor a manifest names it`);
  for (const topic of topics.topics) {
    if (topic.partitions !== PARTITIONS || topic.partitions !== DEFAULT_PARTITIONS) {
      problems.push(`${topic.name}: ${topic.partitions} partitions; the log has ${PARTITIONS} (platform/bus/postgres-log.ts), the Kafka bus ${DEFAULT_PARTITIONS}`);
    }
  }
  return problems;
}

// ----- compose

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, unknown> | string[];
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
}
type Compose = { services: Record<string, ComposeService>; volumes?: Record<string, unknown> };

const COMPOSE_FILE = 'infra/compose/docker-compose.yml';
const COMPOSE_DIR = 'infra/compose';

const envOf = (service: ComposeService): Record<string, string> =>
  Array.isArray(service.environment)
    ? Object.fromEntries(service.environment.map((e) => [e.split('=')[0]!, e.slice(e.indexOf('=') + 1)]))
    : Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]));

// Compose interpolation with stand-ins for what .env provides.
const STAND_INS: Record<string, string> = { SVC_MASTER_KEY: randomBytes(32).toString('base64url') };
const interpolate = (value: string) =>
  value
    .replace(/\$\$/g, '\u0000')
    .replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?(?::?\?[^}]*)?\}/g, (_m, name: string, fallback?: string) => fallback ?? STAND_INS[name] ?? `stand-in-${name.toLowerCase()}`)
    .replace(/\u0000/g, '$');

// A process of ours: built from the repository's Dockerfile (the ClickHouse image is built too).
const isOurs = (service: ComposeService) => service.build?.context === '../..';
const argvOf = (service: ComposeService) => [...(service.entrypoint ?? ENTRYPOINT), ...(service.command ?? DEFAULT_CMD)];

function checkCompose(compose: Compose, envExample: string, files: Files = INFRA_FILES): string[] {
  const problems: string[] = [];
  const services = compose.services;
  const declaredVolumes = new Set(Object.keys(compose.volumes ?? {}));
  const example = new Set([...envExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
  for (const [name, service] of Object.entries(services)) {
    const where = `compose service ${name}`;
    // Every long-running service has a health check; only one-shot jobs may go without.
    const oneShot = service.restart === 'no';
    if (!oneShot && (!service.healthcheck?.test || service.healthcheck.disable)) problems.push(`${where}: no health check`);
    const deps = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
    for (const dep of deps) if (!services[dep]) problems.push(`${where}: depends on ${dep}, which is no service`);
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!;
      if (source.startsWith('.')) {
        const path = normalize(join(COMPOSE_DIR, source));
        if (!files.has(path) && !isDir(files, path)) problems.push(`${where}: mounts ${source}, which does not exist`);
      } else if (!declaredVolumes.has(source)) problems.push(`${where}: volume ${source} is not declared`);
    }
    if (!isOurs(service)) continue;
    const env = envOf(service);
    problems.push(...checkEnvNames(Object.keys(env), where));
    problems.push(...checkLoads(Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v)])), where));
    problems.push(...checkArgv(argvOf(service), where, files));
    problems.push(...checkNodeOptions(env, argvOf(service), where));
    const test = service.healthcheck?.test;
    if (test && !service.healthcheck?.disable) {
      if (test[0] !== 'CMD') problems.push(`${where}: a health check of ours runs a command (CMD), not a shell`);
      else problems.push(...checkArgv(test.slice(1), `${where} healthcheck`, files));
      const probed = /127\.0\.0\.1:(\d+)(\/[^'"]*)/.exec(test.join(' '));
      const listens = listenPortFor(probed?.[2], env);
      if (probed && probed[1] !== listens.value) problems.push(`${where}: the health check probes port ${probed[1]}, the service listens on ${listens.value}`);
    }
  }
  // Every variable the file takes from .env without a default is documented in .env.example.
  const required = new Set(
    [...JSON.stringify(compose).matchAll(/(?<!\$)\$\{([A-Z0-9_]+)(:?[-?][^}]*)?\}/g)]
      .filter(([, , modifier]) => !modifier?.replace(':', '').startsWith('-'))
      .map(([, variable]) => variable!),
  );
  for (const variable of required) if (!example.has(variable)) problems.push(`compose: \${${variable}} is not in ${COMPOSE_DIR}/.env.example`);
  return problems;
}

// ----- kustomize

// The members of Kubernetes and kustomize documents these checks read.
interface EnvVar {
  name: string;
  value?: unknown;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Probe {
  exec?: { command: string[] };
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface K8sSpec {
  replicas?: number;
  template?: { metadata?: { labels?: Record<string, string> }; spec?: { initContainers?: Container[]; containers?: Container[] } };
  // A Service's selector is the labels themselves; a PodDisruptionBudget's is under matchLabels.
  selector?: Record<string, unknown>;
  scaleTargetRef?: { kind: string; name: string };
  minReplicas?: number;
  maxReplicas?: number;
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: K8sSpec;
  data?: Record<string, string>;
}
type PatchDoc = Partial<Omit<K8sObject, 'metadata'>> & { metadata?: { name?: string } };
interface KustomizeImage {
  name: string;
  newTag?: string;
}
interface Kustomization {
  resources?: string[];
  configMapGenerator?: Array<{ name: string; behavior?: string; literals?: string[] }>;
  patches?: Array<{ path?: string; target?: { kind?: string; name?: string } }>;
  images?: KustomizeImage[];
}
interface Kustomized {
  objects: K8sObject[];
  configMaps: Map<string, Record<string, string>>;
  patches: Array<{ file: string; kind: string | undefined; name: string | undefined; doc: PatchDoc }>;
  images: KustomizeImage[];
  problems: string[];
}

const literalsOf = (generator: { literals?: string[] }): Record<string, string> =>
  Object.fromEntries((generator.literals ?? []).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

// A small reading of kustomize: resources (files, or directories with a kustomization), patches
// (files, each targeting a resource of the layers below), configMapGenerator (literals; merge
// onto a generator below) and images. It checks references; it does not render.
function kustomize(dir: string, files: Files = INFRA_FILES): Kustomized {
  const out: Kustomized = { objects: [], configMaps: new Map(), patches: [], images: [], problems: [] };
  const kfile = `${dir}/kustomization.yaml`;
  const text = files.get(kfile);
  if (text === undefined) return { ...out, problems: [`${dir}: no kustomization.yaml`] };
  const k = parse(text) as Kustomization;
  for (const resource of k.resources ?? []) {
    const path = normalize(join(dir, resource));
    if (files.has(path)) out.objects.push(...(yamlDocs(files.get(path)!) as K8sObject[]));
    else if (files.has(`${path}/kustomization.yaml`)) {
      const below = kustomize(path, files);
      out.objects.push(...below.objects);
      out.patches.push(...below.patches);
      out.images.push(...below.images);
      out.problems.push(...below.problems);
      for (const [name, data] of below.configMaps) out.configMaps.set(name, data);
    } else out.problems.push(`${kfile}: resource ${resource} does not exist`);
  }
  for (const generator of k.configMapGenerator ?? []) {
    const base = out.configMaps.get(generator.name);
    if (generator.behavior === 'merge' || generator.behavior === 'replace') {
      if (!base) out.problems.push(`${kfile}: configMapGenerator ${generator.name} merges onto no ConfigMap of the base`);
      out.configMaps.set(generator.name, generator.behavior === 'merge' ? { ...base, ...literalsOf(generator) } : literalsOf(generator));
    } else {
      if (base) out.problems.push(`${kfile}: configMapGenerator ${generator.name} is generated twice`);
      out.configMaps.set(generator.name, literalsOf(generator));
    }
  }
  for (const patch of k.patches ?? []) {
    if (!patch.path) {
      out.problems.push(`${kfile}: inline patches are not used here; put each in a file`);
      continue;
    }
    const path = normalize(join(dir, patch.path));
    const patchText = files.get(path);
    if (patchText === undefined) {
      out.problems.push(`${kfile}: patch ${patch.path} does not exist`);
      continue;
    }
    const doc = (yamlDocs(patchText)[0] ?? {}) as PatchDoc;
    const kind = patch.target?.kind ?? doc.kind;
    const name = patch.target?.name ?? doc.metadata?.name;
    const target = out.objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!target) out.problems.push(`${path}: targets ${kind} ${name}, which no resource below defines`);
    else if (doc.apiVersion && doc.apiVersion !== target.apiVersion) out.problems.push(`${path}: apiVersion ${doc.apiVersion}, the target is ${target.apiVersion}`);
    out.patches.push({ file: path, kind, name, doc });
  }
  const used = new Set(containersOf(out.objects).map((c) => c.container.image));
  for (const image of k.images ?? []) {
    if (!used.has(image.name)) out.problems.push(`${kfile}: images sets ${image.name}, which no container runs`);
    out.images.push(image);
  }
  return out;
}

interface ContainerAt {
  object: K8sObject;
  container: Container;
  where: string;
}
function containersOf(objects: K8sObject[]): ContainerAt[] {
  return objects.flatMap((object) => {
    const pod = object.spec?.template?.spec;
    if (!pod) return [];
    return [...(pod.initContainers ?? []), ...(pod.containers ?? [])].map((container) => ({
      object,
      container,
      where: `${object.kind} ${object.metadata.name} container ${container.name}`,
    }));
  });
}

const SECRET_STAND_INS: Record<string, string> = {
  DATABASE_URL: 'postgres://svc:stand-in@postgres:5432/svc',
  SVC_MASTER_KEY: randomBytes(32).toString('base64url'),
};

function checkKubernetes(result: Kustomized, files: Files = INFRA_FILES): string[] {
  const problems = [...result.problems];
  const ours = containersOf(result.objects).filter((c) => c.container.image === 'svc');
  for (const { container, where } of ours) {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      const name = from.configMapRef?.name ?? from.secretRef?.name;
      if (from.secretRef) problems.push(`${where}: envFrom a Secret hides which variables it sets; use secretKeyRef per variable`);
      const data = name === undefined ? undefined : result.configMaps.get(name);
      if (!data) problems.push(`${where}: envFrom ConfigMap ${name}, which is not generated`);
      else {
        problems.push(...checkEnvNames(Object.keys(data), `ConfigMap ${name}`));
        Object.assign(env, data);
      }
    }
    for (const variable of container.env ?? []) {
      problems.push(...checkEnvNames([variable.name], where));
      const secret = variable.valueFrom?.secretKeyRef;
      const configMap = variable.valueFrom?.configMapKeyRef;
      if (secret) {
        if (secret.key !== variable.name) problems.push(`${where}: ${variable.name} reads Secret key ${secret.key}; keys are named as the variables`);
        env[variable.name] = SECRET_STAND_INS[variable.name] ?? `stand-in-${variable.name.toLowerCase()}`;
      } else if (configMap) {
        const value = result.configMaps.get(configMap.name)?.[configMap.key];
        if (value === undefined) problems.push(`${where}: ${variable.name} reads ConfigMap ${configMap.name} key ${configMap.key}, which is not there`);
        else env[variable.name] = value;
      } else if (typeof variable.value === 'string') env[variable.name] = variable.value;
      else problems.push(`${where}: ${variable.name} has neither a value nor a reference`);
    }
    problems.push(...checkLoads(env, where));
    const argv = [...(container.command ?? ENTRYPOINT), ...(container.args ?? DEFAULT_CMD)];
    problems.push(...checkArgv(argv, where, files));
    problems.push(...checkNodeOptions(env, argv, where));
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'] as const) {
      const spec = container[probe];
      if (!spec) continue;
      if (spec.exec) problems.push(...checkArgv(spec.exec.command, `${where} ${probe}`, files));
      const httpGet = spec.httpGet;
      if (httpGet) {
        if (!HEALTH_ROUTES.includes(httpGet.path)) problems.push(`${where} ${probe}: ${httpGet.path} is not a health route (${HEALTH_ROUTES.join(', ')})`);
        const port = (container.ports ?? []).find((p) => p.name === httpGet.port || p.containerPort === httpGet.port);
        if (!port) problems.push(`${where} ${probe}: port ${httpGet.port} is not a port of the container`);
        else {
          const listens = listenPortFor(httpGet.path, env);
          if (String(port.containerPort) !== listens.value) problems.push(`${where} ${probe}: probes ${port.containerPort}, the process listens on ${listens.name}=${listens.value}`);
        }
      }
    }
    const preStop = container.lifecycle?.preStop?.exec?.command;
    if (preStop) problems.push(...checkArgv(preStop, `${where} preStop`, files));
  }
  const deployments = result.objects.filter((o) => o.kind === 'Deployment');
  const selects = (selector: Record<string, unknown>) =>
    deployments.filter((d) => Object.entries(selector).every(([k, v]) => d.spec?.template?.metadata?.labels?.[k] === v));
  for (const object of result.objects) {
    if (object.kind === 'Service' || object.kind === 'PodDisruptionBudget') {
      const selector = object.kind === 'Service' ? object.spec!.selector! : (object.spec!.selector!.matchLabels as Record<string, unknown>);
      if (selects(selector).length === 0) problems.push(`${object.kind} ${object.metadata.name}: selects no Deployment's pods`);
    }
    if (object.kind === 'HorizontalPodAutoscaler') {
      const target = object.spec!.scaleTargetRef!;
      const deployment = deployments.find((d) => target.kind === 'Deployment' && d.metadata.name === target.name);
      if (!deployment) problems.push(`HorizontalPodAutoscaler ${object.metadata.name}: scales ${target.kind} ${target.name}, which is not defined`);
      // An autoscaled Deployment must not declare replicas: every apply would reset the scale.
      const replicaSetters = [deployment?.spec, ...result.patches.filter((p) => p.kind === 'Deployment' && p.name === target.name).map((p) => p.doc.spec)];
      if (replicaSetters.some((spec) => spec?.replicas !== undefined)) problems.push(`Deployment ${target.name}: autoscaled, yet declares replicas`);
      const bounds = { ...object.spec, ...Object.assign({}, ...result.patches.filter((p) => p.kind === 'HorizontalPodAutoscaler' && p.name === object.metadata.name).map((p) => p.doc.spec)) };
      if (!(bounds.minReplicas >= 1 && bounds.minReplicas <= bounds.maxReplicas)) problems.push(`HorizontalPodAutoscaler ${object.metadata.name}: bounds ${bounds.minReplicas}..${bounds.maxReplicas}`);
    }
  }
  return problems;
}

// The svc arguments each object or service runs, to find who runs which processor.
const svcArgs = (argv: string[]) => (argv[0] === 'node' && argv[1] === 'bin/svc.js' ? argv.slice(2).join(' ') : undefined);

// ---------------------------------------------------------------------------------------------
// The real files, parsed once.

const pipelinesText = INFRA_FILES.get('infra/pipelines.yaml')!;
const topicsText = INFRA_FILES.get('infra/kafka/topics.yaml')!;
const parsedPipelines = parsePipelinesManifest(pipelinesText);
const parsedTopics = parseTopicsManifest(topicsText);
const pipelines = parsedPipelines.ok ? parsedPipelines.value : (undefined as never);
const topics = parsedTopics.ok ? parsedTopics.value : (undefined as never);
const compose = parse(INFRA_FILES.get(COMPOSE_FILE)!, { merge: true }) as Compose;
const envExample = INFRA_FILES.get(`${COMPOSE_DIR}/.env.example`)!;

describe('every YAML file under infra/', () => {
  const yamlFiles = [...INFRA_FILES.keys()].filter((p) => /\.ya?ml$/.test(p));

  it('parses, without errors or warnings', () => {
    expect(yamlFiles.length).toBeGreaterThan(10);
    const problems = yamlFiles.flatMap((path) =>
      parseAllDocuments(INFRA_FILES.get(path)!, { merge: true }).flatMap((doc) => [...doc.errors, ...doc.warnings].map((e) => `${path}: ${e.message}`)),
    );
    expect(problems).toEqual([]);
  });

  it('a broken file is reported', () => {
    const [doc] = parseAllDocuments('services:\n  api:\n    image: [svc\n');
    expect(doc!.errors.length).toBeGreaterThan(0);
  });
});

describe('infra/pipelines.yaml', () => {
  it('validates with its zod schema', () => {
    expect(parsedPipelines.ok ? [] : parsedPipelines.problems).toEqual([]);
  });

  it('is the default manifest of svc run', () => {
    expect(rel(DEFAULT_PIPELINES_MANIFEST)).toBe('infra/pipelines.yaml');
  });

  it('declares exactly the processors, groups and topics of the code (pipelines/groups.ts)', () => {
    expect(checkManifestAgainstCode(pipelines)).toEqual([]);
    const declared = Object.values(pipelines.processors).flatMap((p) => (p.kind === 'consumer' ? [{ group: p.group, topics: [...p.topics].sort() }] : []));
    expect(declared.sort((a, b) => a.group.localeCompare(b.group))).toEqual(
      CONSUMER_GROUPS.map((g) => ({ group: g.group, topics: [...g.topics].sort() })).sort((a, b) => a.group.localeCompare(b.group)),
    );
    expect(Object.keys(pipelines.processors).sort()).toEqual([...PROCESSORS].sort());
  });

  it('matches what each pipeline consumes when it starts, after included, and sets its parallelism', async () => {
    const starters = pipelineStarters({ config: loadConfig({}), masterKey: randomBytes(32), onError: () => {} });
    for (const name of PIPELINES) {
      const processor = pipelines.processors[name]!;
      if (processor.kind !== 'consumer') continue;
      const consumed: ConsumeOptions[] = [];
      const recording = {
        consume: async (options: ConsumeOptions) => {
          consumed.push(options);
          return { assignment: () => [], stop: async () => {} };
        },
        lag: async () => [],
        members: async () => 0,
      };
      const pipeline = await starters[name]({} as Pool, manifestBus(recording, name, processor));
      await pipeline.stop();
      expect(consumed, name).toHaveLength(1);
      expect(consumed[0]).toMatchObject({ group: processor.group, concurrency: processor.parallelism, maxBatch: processor.max_batch });
      expect([...consumed[0]!.topics].sort()).toEqual([...processor.topics].sort());
      expect([...(consumed[0]!.after ?? [])].sort()).toEqual([...processor.after].sort());
    }
  });

  it('names only tables that exist for its workers', () => {
    const missing = Object.entries(pipelines.processors).flatMap(([name, p]) => (p.kind === 'worker' ? p.tables.filter((t) => !TABLES.has(t)).map((t) => `${name}: ${t}`) : []));
    expect(TABLES.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it('refuses a broken manifest: schema, upstream groups, cycles', () => {
    const problemsOf = (text: string) => {
      const result = parsePipelinesManifest(text);
      return result.ok ? [] : result.problems;
    };
    expect(problemsOf(pipelinesText.replace('parallelism: 4', 'parallelism: 0')).join()).toMatch(/processors\.canonical\.parallelism/);
    expect(problemsOf(pipelinesText.replace('after: [graph, aggregates]', 'after: [graph, nobody]')).join()).toMatch(/no processor consumes as group nobody/);
    expect(problemsOf(pipelinesText.replace('after: [graph, aggregates]', 'after: [canonical]')).join()).toMatch(/group canonical does not read canonical\.party/);
    const cycle = pipelinesText.replace(/(graph:\n(?:.*\n)*?    after: )\[\]/, '$1[detect]');
    expect(problemsOf(cycle).join()).toMatch(/cycle/);
    expect(problemsOf(`${pipelinesText}\nsurprise: true\n`).join()).toMatch(/surprise/);
    expect(problemsOf('version: 1\nprocessors: [oops\n').join()).toMatch(/not valid YAML/);
  });

  it('refuses a manifest that disagrees with the code, before and while starting', async () => {
    const broken = clone(pipelines);
    const graph = broken.processors.graph!;
    if (graph.kind !== 'consumer') throw new Error('graph is a consumer');
    graph.topics = graph.topics.filter((t) => t !== 'canonical.movement');
    broken.processors.extra = { kind: 'worker', description: 'not in the code', tables: ['imports'] };
    delete broken.processors.webhooks;
    expect(checkManifestAgainstCode(broken)).toEqual([
      'processors.webhooks: missing (svc run webhooks exists)',
      'processors.extra: svc run has no such processor (canonical, graph, aggregates, detect, imports, reconcile, webhooks)',
      'processors.graph.topics: group graph also reads canonical.movement',
    ]);

    const detect = clone(pipelines.processors.detect!);
    if (detect.kind !== 'consumer') throw new Error('detect is a consumer');
    detect.after = ['graph'];
    const starters = pipelineStarters({ config: loadConfig({}), masterKey: randomBytes(32), onError: () => {} });
    const bus = { consume: async () => ({ assignment: () => [], stop: async () => {} }), lag: async () => [], members: async () => 0 };
    await expect(starters.detect({} as Pool, manifestBus(bus, 'detect', detect))).rejects.toThrow(/after: declared \[graph\]; the pipeline waits for \[graph, aggregates\]/);
  });
});

describe('infra/kafka/topics.yaml', () => {
  it('validates with its zod schema', () => {
    expect(parsedTopics.ok ? [] : parsedTopics.problems).toEqual([]);
  });

  it('defines every topic named anywhere, the relay dead-letter topic, nothing unused, 16 partitions', () => {
    expect(topicsNamedByCode()).toEqual(expect.arrayContaining(['inbox.movement', 'canonical.movement', 'dlq.relay']));
    expect(checkTopics(topics, pipelines)).toEqual([]);
  });

  it('is what the topic jobs apply (compose mounts it; the Kubernetes job reads it from the image)', () => {
    const job = compose.services['kafka-topics']!;
    const argv = argvOf(job);
    expect(argv.slice(0, 4)).toEqual(['node', '--import', 'tsx', 'infra/kafka/create-topics.ts']);
    const mount = job.volumes!.map((v) => v.split(':')).find(([, target]) => target === argv[4]);
    expect(mount && normalize(join(COMPOSE_DIR, mount[0]!))).toBe('infra/kafka/topics.yaml');
    const k8sJob = kustomize('infra/k8s/base').objects.find((o) => o.kind === 'Job' && o.metadata.name === 'svc-kafka-topics')!;
    const container = k8sJob.spec!.template!.spec!.containers![0]!;
    expect([...container.command!, ...container.args!]).toEqual(['node', '--import', 'tsx', 'infra/kafka/create-topics.ts', 'infra/kafka/topics.yaml']);
  });

  it('is planned as declared, and capped consistently for a one-broker cluster', () => {
    const plan = planTopics(topics);
    expect(plan.capped).toEqual([]);
    expect(plan.topics.map((t) => t.topic)).toEqual(topics.topics.map((t) => t.name));
    expect(plan.topics.find((t) => t.topic === 'inbox.movement')).toMatchObject({ numPartitions: 16, replicationFactor: 3 });
    const small = planTopics(topics, 1);
    expect(small.topics.every((t) => t.replicationFactor === 1 && t.configEntries!.find((e) => e.name === 'min.insync.replicas')!.value === '1')).toBe(true);
  });

  it('reports an undefined, unused or mis-partitioned topic, and a bad definition', () => {
    const named = clone(pipelines);
    const detect = named.processors.detect!;
    if (detect.kind !== 'consumer') throw new Error('detect is a consumer');
    detect.topics = [...detect.topics, 'canonical.nope'];
    expect(checkTopics(topics, named)).toEqual(['topic canonical.nope is named but not defined in infra/kafka/topics.yaml']);
    const extra = clone(topics);
    extra.topics.push({ ...clone(extra.topics[0]!), name: 'inbox.orphan', partitions: 8 });
    expect(checkTopics(extra, pipelines)).toEqual([
      'topic inbox.orphan is defined but neither the code nor a manifest names it',
      'inbox.orphan: 8 partitions; the log has 16 (platform/bus/postgres-log.ts), the Kafka bus 16',
    ]);
    const missingDlq = clone(topics);
    missingDlq.topics = missingDlq.topics.filter((t) => t.name !== 'dlq.relay');
    expect(checkTopics(missingDlq, pipelines)).toEqual(['topic dlq.relay is named but not defined in infra/kafka/topics.yaml']);
    const bad = parseTopicsManifest(`version: 1
topics:
  - { name: inbox.party, partitions: 16, replication_factor: 3, config: { cleanup.policy: delete, retention.ms: 1, min.insync.replicas: 4 } }
  - { name: inbox.party, partitions: 16, replication_factor: 3, config: { cleanup.policy: delete, retention.ms: 1, min.insync.replicas: 2 } }
  - { name: inbox.account, partitions: 16, replication_factor: 3, config: { cleanup.policy: shred, retention.ms: forever, min.insync.replicas: 2 } }
`);
    expect(bad.ok ? [] : bad.problems).toEqual([
      expect.stringMatching(/^topics\.2\.config\.cleanup\.policy: /),
      expect.stringMatching(/^topics\.2\.config\.retention\.ms: /),
    ]);
    const refined = parseTopicsManifest(`version: 1
topics:
  - { name: inbox.party, partitions: 16, replication_factor: 3, config: { cleanup.policy: delete, retention.ms: 1, min.insync.replicas: 4 } }
  - { name: inbox.party, partitions: 16, replication_factor: 3, config: { cleanup.policy: delete, retention.ms: 1, min.insync.replicas: 2 } }
`);
    expect(refined.ok ? [] : refined.problems).toEqual(['topics.0.config.min.insync.replicas: exceeds the replication factor 3', 'topics.1.name: inbox.party is defined twice']);
  });
});

describe('infra/compose/docker-compose.yml', () => {
  it('sets only config variables, loads, runs CLI commands, mounts what exists, health-checks every service', () => {
    expect(checkCompose(compose, envExample)).toEqual([]);
  });

  it('runs each processor once, two API replicas and the migrate job, on the image of the Dockerfile', () => {
    const ours = Object.entries(compose.services).filter(([, s]) => isOurs(s));
    expect(ours.every(([, s]) => s.build?.context === '../..' && s.build.dockerfile === 'Dockerfile')).toBe(true);
    const running = ours.map(([, s]) => svcArgs(argvOf(s)));
    for (const name of PROCESSORS) expect(running.filter((r) => r === processorCommand(name).join(' ')), name).toHaveLength(1);
    expect(running.filter((r) => r === 'run api')).toHaveLength(2);
    // The analysts' console: one service, probed on its own port.
    expect(running.filter((r) => r === 'run console')).toHaveLength(1);
    expect(running.filter((r) => r === 'migrate')).toHaveLength(1);
    // Each processor reads the mounted manifest.
    for (const [name, s] of ours) {
      if (!['run api', 'migrate', undefined].includes(svcArgs(argvOf(s)))) {
        const target = envOf(s).SVC_PIPELINES_MANIFEST;
        expect(s.volumes?.some((v) => v.startsWith('../pipelines.yaml:') && v.split(':')[1] === target), name).toBe(true);
      }
    }
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'kafka', 'schema-registry', 'neo4j', 'clickhouse']));
    expect(compose.services.kafka!.image).toMatch(/^apache\/kafka:/);
    expect(envOf(compose.services.kafka!).KAFKA_PROCESS_ROLES).toBe('broker,controller');
    expect(compose.services.neo4j!.image).toMatch(/^neo4j:5\./);
  });

  it('runs each engine at the version CI runs (platform/local-engines)', async () => {
    expect(compose.services.kafka!.image).toBe(`apache/kafka:${KAFKA.version}`);
    expect(compose.services['schema-registry']!.image).toBe(`apicurio/apicurio-registry:${SCHEMA_REGISTRY.version}`);
    expect(compose.services.neo4j!.image).toBe(`neo4j:${neo4jEngine.version}-community`);
    // ClickHouse is built from the Debian package CI installs; the version pinned there is the
    // one the test set-up's server (installed from the same archive) reports.
    const build = compose.services.clickhouse!.build as { context: string };
    const pinned = /clickhouse-server=(\d+\.\d+\.\d+)\+/.exec(readFileSync(join(COMPOSE_DIR, build.context, 'Dockerfile'), 'utf8'))?.[1];
    expect(compose.services.clickhouse!.image).toBe(`svc-clickhouse:${pinned}`);
    const clickhouseUrl = inject('clickhouseUrl');
    if (clickhouseUrl) expect((await (await fetch(`${clickhouseUrl}/?query=SELECT%20version()`)).text()).trim()).toBe(pinned);
  });

  it('reports an unknown variable, a bad value, an unknown command, a missing mount and a missing health check', () => {
    const broken = clone(compose);
    // Services share one environment (a YAML alias): give the broken ones their own.
    broken.services.graph!.environment = { ...envOf(broken.services.graph!), SVC_GRAPH_ENGINE: 'neo4j' };
    const { NODE_OPTIONS: _detectionOptions, ...detectEnv } = envOf(broken.services.detect!);
    broken.services.detect!.environment = { ...detectEnv, SVC_BUS: 'rabbitmq' };
    broken.services.aggregates!.environment = { ...envOf(broken.services.aggregates!), NODE_OPTIONS: DETECTION_NODE_OPTIONS_TEXT };
    broken.services.canonical!.command = ['run', 'pipeline', 'canonicalize'];
    broken.services.imports!.command = ['deploy'];
    broken.services.webhooks!.command = ['status', '--yaml'];
    broken.services.reconcile!.volumes = ['../missing.yaml:/etc/svc/pipelines.yaml:ro'];
    delete broken.services.neo4j!.healthcheck;
    const problems = checkCompose(broken, envExample);
    expect(problems).toEqual(
      expect.arrayContaining([
        'compose service graph: SVC_GRAPH_ENGINE is not a variable of platform/config.ts',
        expect.stringMatching(/^compose service detect: invalid configuration; SVC_BUS: /),
        expect.stringMatching(/^compose service canonical: node bin\/svc\.js run pipeline canonicalize: svc run pipeline takes one of/),
        expect.stringMatching(/^compose service imports: node bin\/svc\.js deploy: svc has no command deploy/),
        'compose service webhooks: node bin/svc.js status --yaml: the CLI knows no option --yaml',
        'compose service reconcile: mounts ../missing.yaml, which does not exist',
        'compose service neo4j: no health check',
        'compose service detect: runs detection without NODE_OPTIONS=--max-semi-space-size=64',
        "compose service aggregates: sets NODE_OPTIONS, which only detection's processes take",
      ]),
    );
    expect(problems).toHaveLength(9);
    expect(checkCompose(compose, envExample.replace(/^NEO4J_PASSWORD=.*$/m, ''))).toEqual(['compose: ${NEO4J_PASSWORD} is not in infra/compose/.env.example']);
  });
});

describe('infra/k8s', () => {
  const base = kustomize('infra/k8s/base');
  const production = kustomize('infra/k8s/overlays/production');

  it('base: references resolve; variables, commands, probes, selectors and the autoscaler check out', () => {
    expect(checkKubernetes(base)).toEqual([]);
  });

  it('production: references and patch targets resolve; the merged configuration loads', () => {
    expect(production.patches.length).toBeGreaterThan(5);
    expect(checkKubernetes(production)).toEqual([]);
    expect(production.images).toEqual([expect.objectContaining({ name: 'svc', newTag: expect.any(String) })]);
  });

  it('runs each processor in one Deployment, and the API behind a Service, an autoscaler and a disruption budget', () => {
    const deployments = base.objects.filter((o) => o.kind === 'Deployment');
    const running = deployments.map((d) => svcArgs([...ENTRYPOINT, ...d.spec!.template!.spec!.containers![0]!.args!]));
    for (const name of PROCESSORS) expect(running.filter((r) => r === processorCommand(name).join(' ')), name).toHaveLength(1);
    expect(running.filter((r) => r === 'run api')).toHaveLength(1);
    for (const kind of ['Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
      expect(base.objects.some((o) => o.kind === kind && o.metadata.name === 'svc-api'), kind).toBe(true);
    }
    // The analysts' console: one Deployment behind its own Service.
    expect(running.filter((r) => r === 'run console')).toHaveLength(1);
    for (const kind of ['Service', 'PodDisruptionBudget']) {
      expect(base.objects.some((o) => o.kind === kind && o.metadata.name === 'svc-console'), kind).toBe(true);
    }
    expect(base.objects.filter((o) => o.kind === 'PodDisruptionBudget')).toHaveLength(deployments.length);
    // Secrets are referenced, never written.
    expect(base.objects.some((o) => o.kind === 'Secret')).toBe(false);
    expect(production.objects.some((o) => o.kind === 'Secret')).toBe(false);
  });

  it('reports a missing file, a patch without a target, an unknown variable or command, a wrong probe, replicas under an autoscaler', () => {
    const files = new Map(INFRA_FILES);
    const overlay = 'infra/k8s/overlays/production';
    files.set(`${overlay}/kustomization.yaml`, files.get(`${overlay}/kustomization.yaml`)!.replace('patches/graph.yaml', 'patches/graf.yaml'));
    files.set(`${overlay}/patches/detect.yaml`, files.get(`${overlay}/patches/detect.yaml`)!.replace('name: svc-detect', 'name: svc-detector'));
    files.set(`${overlay}/patches/api-deployment.yaml`, files.get(`${overlay}/patches/api-deployment.yaml`)!.replace('spec:\n', 'spec:\n  replicas: 3\n'));
    files.set(
      'infra/k8s/base/workers.yaml',
      files
        .get('infra/k8s/base/workers.yaml')!
        .replace('args: [run, pipeline, reconcile]', 'args: [run, pipeline, reconciliation]')
        .replace('- name: DATABASE_URL', '- name: SVC_DB_URL')
        .replace('value: --max-semi-space-size=64', 'value: --max-semi-space-size=16'),
    );
    files.set('infra/k8s/base/api.yaml', files.get('infra/k8s/base/api.yaml')!.replace('path: /ready', 'path: /healthz'));
    files.set('infra/k8s/base/console.yaml', files.get('infra/k8s/base/console.yaml')!.replace('value: "8081"', 'value: "8090"'));
    files.delete('infra/k8s/base/kafka-topics-job.yaml');
    const problems = checkKubernetes(kustomize(overlay, files), files);
    expect(problems).toEqual(
      expect.arrayContaining([
        'infra/k8s/base/kustomization.yaml: resource kafka-topics-job.yaml does not exist',
        'infra/k8s/overlays/production/kustomization.yaml: patch patches/graf.yaml does not exist',
        'infra/k8s/overlays/production/patches/detect.yaml: targets Deployment svc-detector, which no resource below defines',
        'Deployment svc-canonical container svc: SVC_DB_URL is not a variable of platform/config.ts',
        expect.stringMatching(/^Deployment svc-reconcile container svc: node bin\/svc\.js run pipeline reconciliation: svc run pipeline takes one of/),
        'Deployment svc-api container svc readinessProbe: /healthz is not a health route (/health, /ready, /console/v1/health, /console/v1/ready)',
        'Deployment svc-console container svc livenessProbe: probes 8081, the process listens on SVC_CONSOLE_PORT=8090',
        'Deployment svc-api: autoscaled, yet declares replicas',
        'Deployment svc-detect container svc: runs detection without NODE_OPTIONS=--max-semi-space-size=64',
      ]),
    );
  });
});

describe('Dockerfile', () => {
  it('builds on Node 20 with production dependencies only and runs the CLI', () => {
    expect(DOCKERFILE).toMatch(/^FROM node:20[.\d]*-/m);
    expect(DOCKERFILE).toMatch(/npm ci --omit=dev/);
    expect(ENTRYPOINT).toEqual(['node', 'bin/svc.js']);
    expect(checkArgv([...ENTRYPOINT, ...DEFAULT_CMD], 'Dockerfile CMD')).toEqual([]);
    const envNames = [...DOCKERFILE.matchAll(/^ENV\s+([\s\S]*?)(?=^\S|$(?![\s\S]))/gm)].flatMap((m) => [...m[1]!.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((v) => v[1]!));
    expect(envNames.length).toBeGreaterThan(0);
    expect(checkEnvNames(envNames, 'Dockerfile')).toEqual([]);
  });

  it('the CLI command list is read from the code, and wrong commands are reported', () => {
    expect(CLI_COMMANDS).toEqual(expect.arrayContaining(['up', 'run', 'status', 'migrate']));
    expect(RUN_SUBCOMMANDS).toEqual(['api', 'console', 'webhooks', 'pipeline']);
    expect(checkArgv(['node', 'bin/svc.js', 'run', 'pipeline', 'detect'], 'x')).toEqual([]);
    expect(checkArgv(['node', 'bin/svc.js', 'run', 'api', 'now'], 'x')).toEqual(['x: node bin/svc.js run api now: svc run api takes no arguments']);
    expect(checkArgv(['node', 'bin/svc.js', 'serve'], 'x')[0]).toMatch(/svc has no command serve/);
    expect(checkArgv(['node', '--import', 'tsx', 'infra/kafka/create-topics.ts', '--replicas', '1'], 'x')[0]).toMatch(/unknown option --replicas/);
    expect(checkArgv(['bash', '-c', 'true'], 'x')).toEqual(['x: bash -c true: not a command of this service']);
  });
});

describe('npm start', () => {
  it('runs the whole service, detection included, with detection\'s node options', () => {
    const start: string = JSON.parse(read('package.json')).scripts.start;
    expect(start.split(' && ').at(-1)).toBe(['node', ...DETECTION_NODE_OPTIONS, 'bin/svc.js', 'up'].join(' '));
  });
});
