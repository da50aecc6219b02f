// Apache Kafka in KRaft mode, one node that is both broker and controller, from Maven Central's
// jars (no distribution tarball, no Docker): Maven resolves kafka_2.13's runtime classpath, the
// storage is formatted once with the StorageTool, and kafka.Kafka runs with a generated
// server.properties. Shaped like infra/compose's broker, except that topics may be auto-created:
// the bus creates its topics with admin CreateTopics, but a producer may reach a retry or
// dead-letter topic before anyone created it (platform/bus/kafka/topics.ts).
import { execFile as execFileCallback } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { resolveMavenClasspath } from './maven.ts';
import { requireJava } from './prerequisites.ts';
import type { EngineContext, EngineLaunch, EnginePorts, LocalEngineSpec } from './types.ts';
import { KAFKA } from './versions.ts';

const execFile = promisify(execFileCallback);

// As many as the bus's DEFAULT_PARTITIONS: an auto-created topic gets what CreateTopics would.
const AUTO_CREATED_PARTITIONS = 16;

export const kafkaEngine: LocalEngineSpec = {
  name: 'kafka',
  version: KAFKA.version,
  portNames: ['broker', 'controller'],
  async prepare(ctx, ports) {
    const javaHome = await requireJava(KAFKA.javaMajor, `Kafka ${KAFKA.version}`);
    const classpath = await resolveMavenClasspath([...KAFKA.coordinates], ctx.cacheDir, { sha256: KAFKA.sha256, log: ctx.log });
    const logs = join(ctx.dataDir, 'logs');
    const config = join(ctx.dataDir, 'server.properties');
    const log4j = join(ctx.dataDir, 'log4j.properties');
    await mkdir(logs, { recursive: true });
    await writeFile(config, serverProperties(ctx.dataDir, ports));
    await writeFile(log4j, log4jProperties(logs));
    const java = join(javaHome, 'bin', 'java');
    const jvm = [
      '-Xms128m', '-Xmx384m', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true',
      `-Dlog4j.configuration=file:${log4j}`, `-Dkafka.logs.dir=${logs}`,
      '-cp', classpath.join(':'),
    ];
    await formatStorage(ctx, java, jvm, config);
    return { command: java, args: [...jvm, 'kafka.Kafka', config], cwd: ctx.dataDir, logFile: join(logs, 'stdout.log') } satisfies EngineLaunch;
  },
  async ready(ports) {
    // The broker answers metadata and names a controller: registered and unfenced, so an
    // idempotent producer can get its producer id.
    const kafka = new Kafka({ clientId: 'svc-engines-probe', brokers: [address(ports)], logLevel: logLevel.NOTHING, connectionTimeout: 1_000, requestTimeout: 2_000, retry: { retries: 0 } });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      return cluster.brokers.length > 0 && cluster.controller !== null;
    } catch {
      return false;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  },
  exports(ports) {
    return { KAFKA_BROKERS: address(ports) };
  },
};

function address(ports: EnginePorts): string {
  return `127.0.0.1:${ports.broker}`;
}

// KRaft storage is formatted once, with a cluster id of our own: meta.properties under the log
// directory says it was. Formatting again would refuse (or, forced, lose the data).
async function formatStorage(ctx: EngineContext, java: string, jvm: string[], config: string): Promise<void> {
  const formatted = await access(join(ctx.dataDir, 'data', 'meta.properties')).then(() => true, () => false);
  if (formatted) return;
  // Kafka's Uuid text form: 16 random bytes, base64url without padding. Never one starting with
  // '-' (1 in 64): the tool's argument parser takes it for an option and refuses to format, so,
  // as Kafka's own Uuid.randomUuid does, draw again.
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
  ctx.log(`formatting KRaft storage (cluster ${clusterId})`);
  try {
    await execFile(java, [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', config], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const output = `${(error as { stdout?: string }).stdout ?? ''} ${(error as { stderr?: string }).stderr ?? ''}`.trim();
    throw new Error(`formatting Kafka's storage failed: ${output.split('\n').slice(-5).join(' | ') || (error as Error).message}`);
  }
}

function serverProperties(dataDir: string, ports: EnginePorts): string {
  return `# Written by svc engines (platform/local-engines/kafka.ts) on every start; edits are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${ports.controller}
listeners=PLAINTEXT://127.0.0.1:${ports.broker},CONTROLLER://127.0.0.1:${ports.controller}
advertised.listeners=PLAINTEXT://127.0.0.1:${ports.broker}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${join(dataDir, 'data')}
auto.create.topics.enable=true
num.partitions=${AUTO_CREATED_PARTITIONS}
offsets.topic.replication.factor=1
offsets.topic.num.partitions=16
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
# A consumer group's first member starts at once (the tests join many throwaway groups).
group.initial.rebalance.delay.ms=0
message.max.bytes=5242880
# A small machine: few threads, segments that roll at 64 MiB.
num.network.threads=2
num.io.threads=2
background.threads=4
log.segment.bytes=67108864
log.retention.hours=168
`;
}

// Everything to files under the engine's directory, none to the console: stdout.log only gets
// what the JVM itself prints.
function log4jProperties(logs: string): string {
  return `log4j.rootLogger=INFO, server
log4j.appender.server=org.apache.log4j.RollingFileAppender
log4j.appender.server.File=${join(logs, 'server.log')}
log4j.appender.server.MaxFileSize=10MB
log4j.appender.server.MaxBackupIndex=2
log4j.appender.server.layout=org.apache.log4j.PatternLayout
log4j.appender.server.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
`;
}
