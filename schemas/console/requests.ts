import { z } from 'zod';

// Request bodies of /console/v1 (services/console). Strict: an unknown member is refused with its
// path, as on /v1.
const PASSWORD_MIN_LENGTH = 12;
const PASSWORD_MAX_LENGTH = 256;

export const CONSOLE_ROLES = ['analyst', 'supervisor'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

const tenantId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be a tenant id');
export const consoleEmail = z.string().max(254).pipe(z.email());

// The login: a password of any length up to the cap (policy applies when one is set, not here).
export const loginRequestSchema = z.strictObject({
  tenant: tenantId,
  email: consoleEmail,
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
});

export const passwordChangeRequestSchema = z
  .strictObject({
    current_password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
    new_password: z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH),
  })
  // Compared as hashed (NFC): the same password in another Unicode form is the same password.
  .refine((body) => body.current_password.normalize('NFC') !== body.new_password.normalize('NFC'), { path: ['new_password'], message: 'must differ from the current password' });

export type LoginRequest = z.infer<typeof loginRequestSchema>;
export type PasswordChangeRequest = z.infer<typeof passwordChangeRequestSchema>;
