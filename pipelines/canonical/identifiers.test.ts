import { describe, expect, it } from 'vitest';
import { IdentifierHasher } from './identifiers.ts';

const hasher = new IdentifierHasher(Buffer.alloc(32, 7));

describe('IdentifierHasher.hashData', () => {
  it('replaces a fact’s identifying strings by their hashes, appended in order, every other member kept in place', () => {
    const data = JSON.parse('{"type":"p2p","ip":"203.0.113.7","memo":"x","device_ref":"Dev-1","geo":{"country":"US"}}');
    const out = hasher.hashData('t1', 'movement', data);
    const ip = hasher.hash('t1', 'ip', '203.0.113.7');
    const device = hasher.hash('t1', 'device', 'Dev-1');
    expect(JSON.stringify(out)).toBe(`{"type":"p2p","memo":"x","geo":{"country":"US"},"device_ref_hash":"${device}","ip_hash":"${ip}"}`);
    expect(data.ip).toBe('203.0.113.7');
  });

  it('keeps a member that is not a string, overwrites a sent hash member in place, and keeps a __proto__ member', () => {
    const data = JSON.parse('{"ip_hash":"sent","ip":"203.0.113.7","device_ref":7,"__proto__":{"a":1}}');
    const out = hasher.hashData('t1', 'control_event', data);
    expect(JSON.stringify(out)).toBe(`{"ip_hash":"${hasher.hash('t1', 'ip', '203.0.113.7')}","device_ref":7,"__proto__":{"a":1}}`);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('hashes an instrument’s identifiers and each of a party’s identifier values', () => {
    const instrument = hasher.hashData('t1', 'instrument', { fingerprint: 'F', kind: 'card', masked_identifier: '4111********1111' });
    expect(Object.keys(instrument)).toEqual(['kind', 'masked_identifier_hash', 'fingerprint_hash']);
    const party = hasher.hashData('t1', 'party', { name: 'A', identifiers: [{ type: 'email', value: 'A@Example.com', verification_status: 'verified' }] });
    expect(party).toEqual({
      name: 'A',
      identifiers: [{ type: 'email', verification_status: 'verified', value_hash: hasher.hash('t1', 'identifier:email', 'a@example.com') }],
    });
    expect(Object.keys((party.identifiers as object[])[0]!)).toEqual(['type', 'verification_status', 'value_hash']);
  });
});
