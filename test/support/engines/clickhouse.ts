import type { LocalEngine } from './index.ts';

// Placeholder until the ClickHouse harness lands: no local server.
export async function startClickHouse(): Promise<LocalEngine | undefined> {
  return undefined;
}
