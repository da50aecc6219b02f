import { z } from 'zod';
import { parseYamlManifest, type ManifestResult } from './yaml.ts';

// The pipeline manifest (infra/pipelines.yaml): every processor `svc run` can start, what it
// reads, and how it is tuned. Bus consumers name their consumer group, input topics, the upstream
// groups they wait for (Bus `after`) and their parallelism (batches one member handles at once,
// the bus's `concurrency`); workers claim rows from PostgreSQL tables and name them. This schema
// checks the manifest on its own; `svc run` also checks it against what the code consumes
// (services/cli/commands/run.ts), and refuses to start when they disagree.

const name = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'lower-case letters, digits, _ and -, starting with a letter');
export const topicName = z.string().regex(/^[a-z_][a-z0-9_.-]*$/, 'lower-case letters, digits, _ . and -');

const unique = <T extends z.ZodType<string>>(item: T) =>
  z.array(item).refine((items) => new Set(items).size === items.length, 'must not repeat an entry');

const consumerProcessorSchema = z.strictObject({
  kind: z.literal('consumer'),
  description: z.string().min(1),
  group: name,
  topics: unique(topicName).min(1),
  // Upstream consumer groups: a record is delivered only once each of them has committed it.
  after: unique(name).default([]),
  // Partitions of the log one member handles at the same time (each holds a database connection
  // while it works). Several members of a group share the partitions.
  parallelism: z.number().int().min(1).max(64),
  // Records handed to the processor at once, from one partition; the bus's default when unset.
  max_batch: z.number().int().min(1).max(10_000).optional(),
});

const workerProcessorSchema = z.strictObject({
  kind: z.literal('worker'),
  description: z.string().min(1),
  // The PostgreSQL tables it claims its work from (several copies share the work through them).
  tables: unique(name).min(1),
});

const processorSchema = z.discriminatedUnion('kind', [consumerProcessorSchema, workerProcessorSchema]);

const pipelinesManifestSchema = z
  .strictObject({
    version: z.literal(1),
    processors: z.record(name, processorSchema),
  })
  .superRefine((manifest, ctx) => {
    const consumers = Object.entries(manifest.processors).filter(
      (entry): entry is [string, ConsumerProcessor] => entry[1].kind === 'consumer',
    );
    const byGroup = new Map<string, string>();
    for (const [processor, spec] of consumers) {
      const other = byGroup.get(spec.group);
      if (other) ctx.addIssue({ code: 'custom', path: ['processors', processor, 'group'], message: `group ${spec.group} is also the group of ${other}` });
      else byGroup.set(spec.group, processor);
    }
    const specOf = (group: string) => manifest.processors[byGroup.get(group) ?? ''] as ConsumerProcessor | undefined;
    for (const [processor, spec] of consumers) {
      spec.after.forEach((upstream, i) => {
        const path = ['processors', processor, 'after', i];
        const upstreamSpec = specOf(upstream);
        if (upstream === spec.group) return ctx.addIssue({ code: 'custom', path, message: 'a group cannot wait for itself' });
        if (!upstreamSpec) return ctx.addIssue({ code: 'custom', path, message: `no processor consumes as group ${upstream}` });
        // `after` compares offsets on the same topics: the upstream group must read all of ours.
        const missing = spec.topics.filter((t) => !upstreamSpec.topics.includes(t));
        if (missing.length > 0) ctx.addIssue({ code: 'custom', path, message: `group ${upstream} does not read ${missing.join(', ')}` });
      });
    }
    // Waiting in a circle would stop every group in it.
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (group: string, trail: string[]): void => {
      if (done.has(group)) return;
      if (visiting.has(group)) {
        ctx.addIssue({ code: 'custom', path: ['processors'], message: `after forms a cycle: ${[...trail, group].join(' → ')}` });
        return;
      }
      visiting.add(group);
      for (const upstream of specOf(group)?.after ?? []) visit(upstream, [...trail, group]);
      visiting.delete(group);
      done.add(group);
    };
    for (const [, spec] of consumers) visit(spec.group, []);
  });

type ConsumerProcessor = z.infer<typeof consumerProcessorSchema>;
export type Processor = z.infer<typeof processorSchema>;
export type PipelinesManifest = z.infer<typeof pipelinesManifestSchema>;

export function parsePipelinesManifest(text: string): ManifestResult<PipelinesManifest> {
  return parseYamlManifest(pipelinesManifestSchema, text);
}
