// The network searches of one batch of evaluations of one tenant: cycle searches, scatter-gathers,
// shared attributes and counterparty counts asked by the evaluations running side by side are
// gathered until the event loop's next turn and answered by one call of the graph store's `Many`
// read each (a cycle search then costs one statement per length for all the subjects of the turn,
// not one per subject: these searches were most of detection's statements; decision 0044). Each
// ask gets the answer its own read would have given at that turn.
import type { CounterpartyCountRequest, Cycle, CycleOptions, GraphStore, ScatterGather, SharedAttribute, TwoHopOptions } from '../../../platform/graph/port.ts';
import { TurnGatherer } from './turn-gatherer.ts';

export class GraphLoader {
  private readonly cycleSearches: TurnGatherer<{ account: string; options: CycleOptions }, { cycles: Cycle[]; truncated: boolean }>;
  private readonly scatterGathers: TurnGatherer<{ source: string; options: TwoHopOptions }, ScatterGather>;
  private readonly shared: TurnGatherer<{ party: string; limit: number; until: Date }, { shared: SharedAttribute[]; truncated: boolean }>;
  private readonly counts: TurnGatherer<CounterpartyCountRequest, number | null>;
  // One read per party, limit and instant for the whole batch (another evaluation's ask later in
  // the batch gets the answer of the first, as asks of one evaluation already did through its memo).
  // The instant is part of it: links first seen after an evaluation's instant are not its to see.
  private readonly sharedKnown = new Map<string, Promise<{ shared: SharedAttribute[]; truncated: boolean }>>();

  constructor(graph: GraphStore, tenantId: string) {
    this.cycleSearches = new TurnGatherer((asks) => graph.cyclesMany(tenantId, asks));
    this.scatterGathers = new TurnGatherer((asks) => graph.scatterGatherMany(tenantId, asks));
    this.shared = new TurnGatherer((asks) => graph.sharedAttributesMany(tenantId, asks));
    this.counts = new TurnGatherer((asks) => graph.counterpartyCounts(tenantId, asks));
  }

  // A hub's customers all ask how far it reaches, and a hub asks it of each of its customers.
  counterpartyCount(ask: CounterpartyCountRequest): Promise<number | null> {
    return this.counts.get(ask);
  }

  cycles(account: string, options: CycleOptions): Promise<{ cycles: Cycle[]; truncated: boolean }> {
    return this.cycleSearches.get({ account, options });
  }

  scatterGather(source: string, options: TwoHopOptions): Promise<ScatterGather> {
    return this.scatterGathers.get({ source, options });
  }

  sharedAttributes(party: string, limit: number, until: Date): Promise<{ shared: SharedAttribute[]; truncated: boolean }> {
    const key = `${party}\u0000${limit}\u0000${until.getTime()}`;
    let found = this.sharedKnown.get(key);
    if (!found) {
      found = this.shared.get({ party, limit, until });
      // A failed read is not remembered: the batch fails and is retried.
      found.catch(() => this.sharedKnown.delete(key));
      this.sharedKnown.set(key, found);
    }
    return found;
  }
}
