import { describe, expect, it } from 'vitest';
import { isTransient } from './transient.ts';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });
// As @kafkajs/confluent-schema-registry throws them: a name, a status and a message, no code.
const registryError = (status: number, message: string) => Object.assign(new Error(message), { name: 'ResponseError', status, unauthorized: status === 401, url: 'GET http://127.0.0.1:8081/schemas/ids/7' });

// What is waited out (retried in place without end) and what a record is parked for: a wrong
// answer either way is an outage (everything parked while an engine is away) or a stall.
describe('isTransient', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a reset connection', withCode('ECONNRESET')],
    ['a DNS failure', withCode('EAI_AGAIN')],
    ['undici losing its socket (fetch: ClickHouse, the registry)', withCode('UND_ERR_SOCKET')],
    ['PostgreSQL: connection failure', withCode('08006')],
    ['PostgreSQL: serialization failure', withCode('40001')],
    ['PostgreSQL: deadlock', withCode('40P01')],
    ['PostgreSQL: too many connections', withCode('53300')],
    ['PostgreSQL: shutting down', withCode('57P01')],
    ['PostgreSQL: a lock not available', withCode('55P03')],
    ['node-postgres: a lost connection', new Error('Connection terminated unexpectedly')],
    ['node-postgres: an exhausted pool', new Error('timeout exceeded when trying to connect')],
    ['Neo4j: server unavailable', withCode('ServiceUnavailable')],
    ['Neo4j: a transient error', withCode('Neo.TransientError.Transaction.DeadlockDetected')],
    ['an error its driver marks retriable (kafkajs, neo4j-driver)', Object.assign(new Error('x'), { retriable: true })],
    ['kafkajs: a lost broker', Object.assign(new Error('x'), { name: 'KafkaJSConnectionError' })],
    ['kafkajs: a group coordinator still loading (which kafkajs calls non-retriable)', Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound', retriable: false })],
    ['ClickHouse: memory limit', new Error('Code: 241. DB::Exception: Memory limit (total) exceeded')],
    ['the schema registry refusing connections', registryError(400, 'svc - Error, status 400: connect ECONNREFUSED 127.0.0.1:8081')],
    ['the schema registry hanging up', registryError(400, 'svc - Error, status 400: socket hang up')],
    ['the schema registry unavailable', registryError(503, 'svc - busy')],
    ['the schema registry timing out', registryError(408, 'svc - Error, status 408: timeout')],
    ['a wrapped cause', Object.assign(new Error('write failed'), { cause: withCode('ECONNREFUSED') })],
    ['one of several', new AggregateError([new Error('x'), withCode('ETIMEDOUT')])],
  ])('waits out %s', (_what, error) => {
    expect(isTransient(error)).toBe(true);
  });

  it.each([
    ['a plain error', new Error('Invalid time value')],
    ['a RangeError', new RangeError('Invalid time value')],
    ['PostgreSQL: numeric overflow', withCode('22003', 'numeric field overflow')],
    ['PostgreSQL: a statement timeout (the same record would hit it again)', withCode('57014')],
    ['PostgreSQL: a constraint violation', withCode('23505')],
    ['Neo4j: a client error', withCode('Neo.ClientError.Statement.SyntaxError')],
    ['ClickHouse: a type mismatch', new Error('Code: 53. DB::Exception: Type mismatch')],
    ['the schema registry not knowing a schema id', registryError(404, 'svc - Schema 7 not found')],
    ['the schema registry refusing a request', registryError(400, 'svc - Error, status 400: bad request')],
    ['not an error at all', 'a string'],
    ['nothing', undefined],
  ])('parks on %s', (_what, error) => {
    expect(isTransient(error)).toBe(false);
  });

  it('stops following a cause chain that loops', () => {
    const error: Error & { cause?: unknown } = new Error('loop');
    error.cause = error;
    expect(isTransient(error)).toBe(false);
  });
});
