import { canonicalChangeTopic } from '../schemas/bus/canonical-change.ts';
import { FAMILY_NAMES } from '../schemas/families/index.ts';

// Every consumer group of the service and the topics it reads: the pipelines consume with these,
// and status and metrics report each group's lag over them.
export interface ConsumerGroupSpec {
  group: string;
  topics: string[];
}

const INBOX_TOPICS = FAMILY_NAMES.map((family) => `inbox.${family}`);
const CHANGE_TOPICS = FAMILY_NAMES.map(canonicalChangeTopic);

export const CANONICAL: ConsumerGroupSpec = { group: 'canonical', topics: INBOX_TOPICS };
export const GRAPH: ConsumerGroupSpec = { group: 'graph', topics: CHANGE_TOPICS };
export const AGGREGATES: ConsumerGroupSpec = { group: 'aggregates', topics: [canonicalChangeTopic('movement')] };

export const CONSUMER_GROUPS: ConsumerGroupSpec[] = [CANONICAL, GRAPH, AGGREGATES];
