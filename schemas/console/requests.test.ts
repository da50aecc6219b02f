import { describe, expect, it } from 'vitest';
import { passwordChangeRequestSchema } from './requests.ts';

describe('passwordChangeRequestSchema', () => {
  it('takes a new password in another Unicode form of the current one for the same password', () => {
    const composed = 'café-password-1';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    const refused = passwordChangeRequestSchema.safeParse({ current_password: composed, new_password: decomposed });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues.map((issue) => issue.path)).toEqual([['new_password']]);
    expect(passwordChangeRequestSchema.safeParse({ current_password: composed, new_password: 'another-password-2' }).success).toBe(true);
  });
});
