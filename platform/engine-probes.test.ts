import { describe, expect, it } from 'vitest';
import { withoutCredentials } from './engine-probes.ts';

// Engine addresses are printed by svc status and in start-up failures: never a password.
describe('withoutCredentials', () => {
  it.each([
    ['postgres://svc:S3cret@db:5432/svc', 'postgres://db:5432/svc'],
    ['postgres://db:5432/svc?user=svc&password=S3cret&sslmode=require', 'postgres://db:5432/svc?user=svc&sslmode=require'],
    ['postgres://db/svc?PASSWORD=S3cret&sslpassword=S3cret', 'postgres://db/svc'],
    ['neo4j://127.0.0.1:7687', 'neo4j://127.0.0.1:7687'],
  ])('shows %s as %s', (address, shown) => {
    expect(withoutCredentials(address)).toBe(shown);
    expect(withoutCredentials(address)).not.toContain('S3cret');
  });

  it('shows no user information nor query of an address it cannot parse', () => {
    const shown = withoutCredentials('postgres://svc:S3c ret@db:bad port/svc?password=S3cret');
    expect(shown).not.toContain('S3c');
  });
});
