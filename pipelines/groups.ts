import { canonicalChangeTopic } from '../schemas/bus/canonical-change.ts';
import { FAMILY_NAMES } from '../schemas/families/index.ts';

// Every consumer group of the service and the topics it reads: the pipelines consume with these,
// and status and metrics report each group's lag over them.
export interface ConsumerGroupSpec {
  group: string;
  topics: string[];
}

export const INBOX_TOPICS = FAMILY_NAMES.map((family) => `inbox.${family}`);
const CHANGE_TOPICS = FAMILY_NAMES.map(canonicalChangeTopic);

export const CANONICAL: ConsumerGroupSpec = { group: 'canonical', topics: INBOX_TOPICS };
export const GRAPH: ConsumerGroupSpec = { group: 'graph', topics: CHANGE_TOPICS };
// Aggregates use movements only, but read every change topic so that their offsets keep up with
// the whole stream: detection waits for the graph's and the aggregates' offsets (Bus `after`).
export const AGGREGATES: ConsumerGroupSpec = { group: 'aggregates', topics: CHANGE_TOPICS };
export const DETECT: ConsumerGroupSpec = { group: 'detect', topics: CHANGE_TOPICS };

// Reconciliations compare declared totals with canonical movements when those change.
export const RECONCILE: ConsumerGroupSpec = { group: 'reconcile', topics: CHANGE_TOPICS };

export const CONSUMER_GROUPS: ConsumerGroupSpec[] = [CANONICAL, GRAPH, AGGREGATES, DETECT, RECONCILE];
