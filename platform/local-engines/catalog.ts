// Which engines `svc engines` knows, in the order they start and print. Neo4j's module is written
// separately (platform/local-engines/neo4j.ts exporting `neo4jEngine`) and joins the list only when
// it is there: loaded by path so this file type-checks and runs without it.
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { clickhouseEngine } from './clickhouse.ts';
import { kafkaEngine } from './kafka.ts';
import { schemaRegistryEngine } from './schema-registry.ts';
import type { EngineName, LocalEngineSpec } from './types.ts';

export const ENGINE_NAMES: readonly EngineName[] = ['kafka', 'schema-registry', 'neo4j', 'clickhouse'];

export async function engineCatalog(): Promise<LocalEngineSpec[]> {
  const neo4j = await loadNeo4j();
  return [kafkaEngine, schemaRegistryEngine, ...(neo4j ? [neo4j] : []), clickhouseEngine];
}

async function loadNeo4j(): Promise<LocalEngineSpec | undefined> {
  const file = new URL('./neo4j.ts', import.meta.url);
  if (!(await access(fileURLToPath(file)).then(() => true, () => false))) return undefined;
  const module = (await import(file.href)) as { neo4jEngine?: LocalEngineSpec };
  const spec = module.neo4jEngine;
  return spec && spec.name === 'neo4j' && typeof spec.prepare === 'function' ? spec : undefined;
}
