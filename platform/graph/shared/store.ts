import type { CounterpartyCountRequest, CycleOptions, EdgeFilter, EgoOptions, GraphChange, GraphNode, GraphStore, NodeRef, PathOptions, TwoHopOptions } from '../port.ts';
import type { GraphReads } from './access.ts';
import { findCycles, flowSet, gatherScatter, scatterGather, sharedAttributes } from './flows.ts';
import { expand, reachMany, shortestPaths } from './traverse.ts';

// How long one graph read may take before it answers with what it has (truncated).
export const DEFAULT_READ_BUDGET_MS = 2_000;

// A GraphStore whose traversals and movement queries are the shared ones (traverse.ts, flows.ts),
// run over the reads an engine gives for one answer. An adapter provides `read` (one tenant, one
// read budget), apply, node and holdings. The `Many` reads answer many requests in the statements
// one of them would take, under one read budget for them all; the single reads are those of one.
export abstract class TraversalGraphStore implements GraphStore {
  abstract apply(changes: GraphChange[]): Promise<void>;
  abstract node(tenantId: string, node: NodeRef): Promise<GraphNode | null>;
  abstract holdings(tenantId: string, requests: Array<{ party: string; until: Date }>, limit: number): Promise<string[][]>;

  // Runs the reads of one answer within the read budget (one transaction of the engine).
  protected abstract read<T>(tenantId: string, work: (reads: GraphReads) => Promise<T>): Promise<T>;

  egoNetwork(tenantId: string, center: NodeRef, options: EgoOptions) {
    return this.read(tenantId, (reads) => expand(reads, center, options));
  }

  async reach(tenantId: string, center: NodeRef, options: EgoOptions) {
    const [found] = await this.reachMany(tenantId, [{ center, options }]);
    return found!;
  }

  async reachMany(tenantId: string, requests: Array<{ center: NodeRef; options: EgoOptions }>) {
    if (requests.length === 0) return [];
    return this.read(tenantId, (reads) => reachMany(reads, requests));
  }

  shortestPaths(tenantId: string, from: NodeRef, to: NodeRef, options: PathOptions) {
    return this.read(tenantId, (reads) => shortestPaths(reads, from, to, options));
  }

  component(tenantId: string, start: NodeRef, options: { filter?: EdgeFilter; nodeCap: number }) {
    return this.read(tenantId, (reads) => expand(reads, start, { ...options, depth: Number.POSITIVE_INFINITY }));
  }

  async cycles(tenantId: string, account: string, options: CycleOptions) {
    const [found] = await this.cyclesMany(tenantId, [{ account, options }]);
    return found!;
  }

  async cyclesMany(tenantId: string, requests: Array<{ account: string; options: CycleOptions }>) {
    if (requests.length === 0) return [];
    return this.read(tenantId, (reads) => findCycles(reads, requests));
  }

  fanIn(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }) {
    return this.read(tenantId, (reads) => flowSet(reads, account, 'in', window));
  }

  fanOut(tenantId: string, account: string, window: { since: Date; until: Date; limit: number }) {
    return this.read(tenantId, (reads) => flowSet(reads, account, 'out', window));
  }

  // One statement per direction and bound among the requests (detection asks with one bound).
  async counterpartyCounts(tenantId: string, requests: CounterpartyCountRequest[]) {
    if (requests.length === 0) return [];
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => {
      const key = `${r.direction}:${r.atMost}`;
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
    });
    const counts: Array<number | null> = requests.map(() => null);
    await this.read(tenantId, async (reads) => {
      for (const indexes of groups.values()) {
        const { direction, atMost } = requests[indexes[0]!]!;
        const found = await reads.counterpartyCounts(direction, atMost + 1, indexes.map((i) => requests[i]!));
        if (found) indexes.forEach((index, j) => (counts[index] = found[j]!));
      }
    });
    return counts;
  }

  async scatterGather(tenantId: string, source: string, options: TwoHopOptions) {
    const [found] = await this.scatterGatherMany(tenantId, [{ source, options }]);
    return found!;
  }

  async scatterGatherMany(tenantId: string, requests: Array<{ source: string; options: TwoHopOptions }>) {
    if (requests.length === 0) return [];
    return this.read(tenantId, (reads) => scatterGather(reads, requests));
  }

  gatherScatter(tenantId: string, hub: string, window: { since: Date; until: Date; limit: number }) {
    return this.read(tenantId, (reads) => gatherScatter(reads, hub, window));
  }

  async sharedAttributes(tenantId: string, party: string, options: { limit: number; until: Date }) {
    const [found] = await this.sharedAttributesMany(tenantId, [{ party, limit: options.limit, until: options.until }]);
    return found!;
  }

  async sharedAttributesMany(tenantId: string, requests: Array<{ party: string; limit: number; until: Date }>) {
    if (requests.length === 0) return [];
    return this.read(tenantId, (reads) => sharedAttributes(reads, requests));
  }
}
