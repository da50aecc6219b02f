import { z } from 'zod';
import { topicName } from './pipelines.ts';
import { parseYamlManifest, type ManifestResult } from './yaml.ts';

// The Kafka topic definitions (infra/kafka/topics.yaml): name, partitions, replication factor and
// the topic-level configuration the topic job applies (infra/kafka/create-topics.ts). Kafka takes
// configuration values as strings; numbers in the file are accepted and written as strings.

const configValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
const milliseconds = z
  .union([z.string(), z.number()])
  .transform(String)
  .pipe(z.string().regex(/^(-1|\d+)$/, 'milliseconds, or -1 for unbounded'));

const topicSchema = z.strictObject({
  name: topicName,
  partitions: z.number().int().min(1).max(10_000),
  replication_factor: z.number().int().min(1).max(9),
  config: z
    .object({
      'cleanup.policy': z.enum(['delete', 'compact', 'compact,delete']),
      'retention.ms': milliseconds,
      'min.insync.replicas': z.union([z.string(), z.number()]).transform(String).pipe(z.string().regex(/^[1-9]\d*$/)),
    })
    .catchall(configValue),
});

const topicsManifestSchema = z
  .strictObject({
    version: z.literal(1),
    topics: z.array(topicSchema).min(1),
  })
  .superRefine((manifest, ctx) => {
    const seen = new Set<string>();
    manifest.topics.forEach((topic, i) => {
      if (seen.has(topic.name)) ctx.addIssue({ code: 'custom', path: ['topics', i, 'name'], message: `${topic.name} is defined twice` });
      seen.add(topic.name);
      // More in-sync replicas required than exist would refuse every acks=all write.
      if (Number(topic.config['min.insync.replicas']) > topic.replication_factor) {
        ctx.addIssue({
          code: 'custom',
          path: ['topics', i, 'config', 'min.insync.replicas'],
          message: `exceeds the replication factor ${topic.replication_factor}`,
        });
      }
    });
  });

export type TopicsManifest = z.infer<typeof topicsManifestSchema>;

export function parseTopicsManifest(text: string): ManifestResult<TopicsManifest> {
  return parseYamlManifest(topicsManifestSchema, text);
}
