import { describe, expect, it } from 'vitest';
import { describeFailure } from './failure-description.ts';

describe('describeFailure', () => {
  it('gives the innermost cause a driver wrapped, on one line', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('pool failed\n  while connecting', { cause: new Error('connection failed', { cause: socket }) });
    expect(describeFailure(wrapped)).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(describeFailure(new AggregateError([socket], 'all attempts failed'))).toBe('connect ECONNREFUSED 127.0.0.1:5432');
  });

  it('adds the code when the text does not say it', () => {
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(describeFailure(shutdown)).toBe('terminating connection due to administrator command (57P01)');
  });

  it('keeps what follows "Caused by:" and removes credentials from URLs', () => {
    const neo4j = Object.assign(new Error('Could not perform discovery. Caused by: connect ECONNREFUSED 127.0.0.1:7687'), { code: 'ServiceUnavailable' });
    expect(describeFailure(neo4j)).toBe('connect ECONNREFUSED 127.0.0.1:7687 (ServiceUnavailable)');
    expect(describeFailure(new Error('cannot reach postgres://svc:s3cret@db:5432/svc'))).toBe('cannot reach postgres://db:5432/svc');
  });

  it('describes what is not an Error', () => {
    expect(describeFailure('plain text')).toBe('plain text');
  });
});
