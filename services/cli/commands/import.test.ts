import { expect, it } from 'vitest';
import { UsageError } from '../context.ts';
import { parseImportArgs } from './import.ts';

const base = ['--mapping', 'm.json', '--file', 'f.csv', '--key-id', 'svc_test_k'];
// A key secret as issued: 43 base64url characters (32 bytes).
const secret = (first: string) => `${first}${'A'.repeat(42)}`;

// A key secret is base64url: one in 64 begins with '-', which an option parser takes for an option.
it('takes the token after --key-secret as the secret, even when it begins with a dash', () => {
  expect(parseImportArgs([...base, '--key-secret', secret('-'), '--dry-run'], {}).keySecret).toBe(secret('-'));
  expect(parseImportArgs([...base, `--key-secret=${secret('-')}`], {}).keySecret).toBe(secret('-'));
  expect(parseImportArgs([...base, '--key-secret', secret('p')], {})).toMatchObject({ keySecret: secret('p'), dryRun: false });
});

it('still asks for a secret given no value', () => {
  expect(() => parseImportArgs([...base, '--key-secret'], {})).toThrow(UsageError);
});

// Exit 2 with one line ("could not run"), not a stack trace and exit 1 ("rows were rejected").
it('refuses a secret that is not one as issued, without echoing it', () => {
  for (const wrong of ['plain', `${secret('x')}\r`, `svc_test_k${secret('x')}`, '--dry-run']) {
    expect(() => parseImportArgs([...base, '--key-secret', wrong], {}), wrong).toThrow(UsageError);
    try {
      parseImportArgs([...base, '--key-secret', wrong], {});
    } catch (error) {
      expect((error as Error).message).toMatch(/not a key secret as issued/);
      expect((error as Error).message).not.toContain(wrong);
    }
  }
});
