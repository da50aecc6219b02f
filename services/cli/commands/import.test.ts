import { expect, it } from 'vitest';
import { UsageError } from '../context.ts';
import { parseImportArgs } from './import.ts';

const base = ['--mapping', 'm.json', '--file', 'f.csv', '--key-id', 'svc_test_k'];

// A key secret is base64url: one in 64 begins with '-', which an option parser takes for an option.
it('takes the token after --key-secret as the secret, even when it begins with a dash', () => {
  expect(parseImportArgs([...base, '--key-secret', '-Ab_c', '--dry-run'], {}).keySecret).toBe('-Ab_c');
  expect(parseImportArgs([...base, '--key-secret=-Ab_c'], {}).keySecret).toBe('-Ab_c');
  expect(parseImportArgs([...base, '--key-secret', 'plain'], {})).toMatchObject({ keySecret: 'plain', dryRun: false });
});

it('still asks for a secret given no value', () => {
  expect(() => parseImportArgs([...base, '--key-secret'], {})).toThrow(UsageError);
});
