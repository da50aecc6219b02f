// The topic job: creates the topics of infra/kafka/topics.yaml that do not exist yet and sets the
// declared configuration on those that do. Safe to run again; compose and the Kubernetes base run
// it once per deployment, before the service.
//
//   node --import tsx infra/kafka/create-topics.ts [FILE] [--max-replication-factor N] [--plan]
//
// FILE defaults to infra/kafka/topics.yaml beside this script. --max-replication-factor caps the
// replication factor (and min.insync.replicas with it) for a cluster smaller than production, the
// single broker of the compose stack. --plan prints what would be requested, as JSON, and
// connects to nothing. Brokers and client id come from KAFKA_BROKERS and KAFKA_CLIENT_ID
// (platform/config.ts). A partition count is never changed: keys would move to other partitions
// and lose their order, so a topic whose count differs from the file fails the job.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import kafkajs, { type ITopicConfig } from 'kafkajs';
import { ConfigError, loadConfig } from '../../platform/config.ts';
import { parseTopicsManifest, type TopicsManifest } from '../../schemas/infra/topics.ts';

export const DEFAULT_TOPICS_FILE = fileURLToPath(new URL('./topics.yaml', import.meta.url));

export interface TopicPlan {
  topics: ITopicConfig[];
  // Topics whose replication was capped, for the log.
  capped: string[];
}

// What the job asks the cluster for: every topic with its partitions, replication factor and
// configuration entries, capped to a smaller cluster when asked.
export function planTopics(manifest: TopicsManifest, maxReplicationFactor?: number): TopicPlan {
  const capped: string[] = [];
  const topics = manifest.topics.map((topic): ITopicConfig => {
    const replicationFactor = Math.min(topic.replication_factor, maxReplicationFactor ?? Infinity);
    const config: Record<string, string> = { ...topic.config };
    if (replicationFactor < topic.replication_factor) {
      capped.push(`${topic.name}: replication factor ${topic.replication_factor} → ${replicationFactor}`);
      config['min.insync.replicas'] = String(Math.min(Number(config['min.insync.replicas']), replicationFactor));
    }
    return {
      topic: topic.name,
      numPartitions: topic.partitions,
      replicationFactor,
      configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
    };
  });
  return { topics, capped };
}

export interface JobArguments {
  file: string;
  maxReplicationFactor?: number;
  plan: boolean;
}

export function parseArguments(argv: string[]): JobArguments {
  const args: JobArguments = { file: DEFAULT_TOPICS_FILE, plan: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--plan') args.plan = true;
    else if (arg === '--max-replication-factor') {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 1) throw new ConfigError('--max-replication-factor takes a positive integer');
      args.maxReplicationFactor = value;
    } else if (arg.startsWith('-')) throw new ConfigError(`unknown option ${arg}`);
    else args.file = resolve(arg);
  }
  return args;
}

export async function readTopicsManifest(file: string): Promise<TopicsManifest> {
  const parsed = parseTopicsManifest(await readFile(file, 'utf8'));
  if (!parsed.ok) throw new ConfigError(`invalid topic definitions ${file}\n  ${parsed.problems.join('\n  ')}`);
  return parsed.value;
}

async function main(argv: string[]): Promise<void> {
  const args = parseArguments(argv);
  const plan = planTopics(await readTopicsManifest(args.file), args.maxReplicationFactor);
  for (const line of plan.capped) process.stderr.write(`capped: ${line}\n`);
  if (args.plan) {
    process.stdout.write(`${JSON.stringify(plan.topics, null, 2)}\n`);
    return;
  }
  const config = loadConfig();
  if (!config.KAFKA_BROKERS) throw new ConfigError('KAFKA_BROKERS: required by the topic job');
  const kafka = new kafkajs.Kafka({
    clientId: `${config.KAFKA_CLIENT_ID}-topics`,
    brokers: config.KAFKA_BROKERS.split(',').map((b) => b.trim()),
    logLevel: kafkajs.logLevel.WARN,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = plan.topics.filter((t) => !existing.has(t.topic));
    const present = plan.topics.filter((t) => existing.has(t.topic));
    if (missing.length > 0) {
      await admin.createTopics({ topics: missing, waitForLeaders: true });
      for (const t of missing) process.stdout.write(`created ${t.topic} (${t.numPartitions} partitions, replication ${t.replicationFactor})\n`);
    }
    if (present.length > 0) {
      const { topics } = await admin.fetchTopicMetadata({ topics: present.map((t) => t.topic) });
      const wrong = topics.filter((m) => m.partitions.length !== present.find((t) => t.topic === m.name)!.numPartitions);
      if (wrong.length > 0) {
        throw new Error(
          `partition counts differ from the file and are never changed: ${wrong.map((m) => `${m.name} has ${m.partitions.length}`).join(', ')}`,
        );
      }
      // The declared configuration is authoritative: AlterConfigs replaces a topic's whole set.
      await admin.alterConfigs({
        validateOnly: false,
        resources: present.map((t) => ({ type: kafkajs.ConfigResourceTypes.TOPIC, name: t.topic, configEntries: t.configEntries ?? [] })),
      });
      for (const t of present) process.stdout.write(`configured ${t.topic}\n`);
    }
  } finally {
    await admin.disconnect();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`create-topics: ${error instanceof ConfigError ? error.message : ((error as Error).stack ?? String(error))}\n`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  });
}
