import { describe, expect, it } from 'vitest';
import { portsOn } from './engines.ts';

describe('svc engines up', () => {
  it('puts the service on every engine it gives the address of, and on no other', () => {
    expect(portsOn({ KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081', NEO4J_URI: 'bolt://127.0.0.1:7687', CLICKHOUSE_URL: 'http://127.0.0.1:8123' })).toEqual({
      SVC_BUS: 'kafka',
      SVC_GRAPH_STORE: 'neo4j',
      SVC_AGGREGATE_STORE: 'clickhouse',
    });
    // Kafka without its registry cannot carry the bus; Neo4j alone moves only the graph.
    expect(portsOn({ KAFKA_BROKERS: '127.0.0.1:9092', NEO4J_URI: 'bolt://127.0.0.1:7687' })).toEqual({ SVC_GRAPH_STORE: 'neo4j' });
    expect(portsOn({})).toEqual({});
  });
});
