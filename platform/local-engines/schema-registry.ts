// The Confluent-compatible schema registry: Apicurio Registry 3, serving the Confluent API at
// /apis/ccompat/v7 (docs/decisions/0020-local-engines.md). Its schemas live in an H2 database
// file under the engine's directory, so they survive `down` and `up` like Kafka's topics do
// (Confluent's registry keeps them in Kafka's _schemas topic; the effect is the same here).
import { join } from 'node:path';
import { fetchMavenArchive } from './maven.ts';
import { requireJava } from './prerequisites.ts';
import type { EngineLaunch, EnginePorts, LocalEngineSpec } from './types.ts';
import { SCHEMA_REGISTRY } from './versions.ts';

// The Confluent-compatible API base that @kafkajs/confluent-schema-registry is given.
const CONFLUENT_API = '/apis/ccompat/v7';

export const schemaRegistryEngine: LocalEngineSpec = {
  name: 'schema-registry',
  version: SCHEMA_REGISTRY.version,
  // `management` is Quarkus's management interface (health, metrics): bound to loopback too,
  // on a port of ours instead of its 0.0.0.0:9000 default.
  portNames: ['http', 'management'],
  async prepare(ctx, ports) {
    const javaHome = await requireJava(SCHEMA_REGISTRY.javaMajor, `Apicurio Registry ${SCHEMA_REGISTRY.version}`);
    const app = await fetchMavenArchive(SCHEMA_REGISTRY.coordinate, SCHEMA_REGISTRY.sha256, ctx.cacheDir, { log: ctx.log });
    const settings: Record<string, string> = {
      'quarkus.http.host': '127.0.0.1',
      'quarkus.http.port': String(ports.http),
      'quarkus.management.host': '127.0.0.1',
      'quarkus.management.port': String(ports.management),
      'apicurio.storage.kind': 'sql',
      'apicurio.storage.sql.kind': 'h2',
      'apicurio.datasource.url': `jdbc:h2:file:${join(ctx.dataDir, 'registry')}`,
      // The whole log to a rotated file; warnings and worse also to the console (stdout.log),
      // where the framework reads why a start failed.
      'quarkus.log.file.enabled': 'true',
      'quarkus.log.file.path': join(ctx.dataDir, 'registry.log'),
      'quarkus.log.file.rotation.max-file-size': '10M',
      'quarkus.log.file.rotation.max-backup-index': '2',
      'quarkus.log.console.level': 'WARN',
      // Apicurio's build turns on one access-log line per request: noise at the tests' rate.
      'quarkus.http.access-log.enabled': 'false',
    };
    return {
      command: join(javaHome, 'bin', 'java'),
      args: [
        // Serial GC and C1 only: a small heap, and less CPU spent compiling on a 2-core machine.
        '-Xms64m', '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true',
        ...Object.entries(settings).map(([key, value]) => `-D${key}=${value}`),
        '-jar', join(app, 'quarkus-run.jar'),
      ],
      cwd: ctx.dataDir,
      logFile: join(ctx.dataDir, 'stdout.log'),
    } satisfies EngineLaunch;
  },
  async ready(ports) {
    try {
      const response = await fetch(`${baseUrl(ports)}/subjects`, { signal: AbortSignal.timeout(2_000) });
      return response.ok;
    } catch {
      return false;
    }
  },
  exports(ports) {
    return { SCHEMA_REGISTRY_URL: baseUrl(ports) };
  },
};

function baseUrl(ports: EnginePorts): string {
  return `http://127.0.0.1:${ports.http}${CONFLUENT_API}`;
}
