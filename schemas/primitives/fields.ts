import { isIP } from 'node:net';
import { z } from 'zod';
import { ASSET_CODE } from '../assets/registry.ts';

// Field builders for the spec's tables, so each constraint is written the way the table says it.
// No field holds U+0000 (PostgreSQL text and jsonb cannot store it) or an unpaired UTF-16
// surrogate (no Unicode text holds one: PostgreSQL would store U+FFFD instead and Avro on the Kafka
// bus cannot carry it), so both are refused at the edge rather than failing later in a pipeline.
// One pass over the value (every text field of every event is checked on ingest).
const NOT_STORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const storable = (v: string) => !NOT_STORABLE.test(v);
const notStorable = { message: 'must not contain the character U+0000 or an unpaired surrogate' };
// For a string built another way (trimmed first, say): `.refine(...STORABLE)`.
export const STORABLE = [storable, notStorable] as const;
export const text = (min: number, max: number) => z.string().min(min).max(max).refine(storable, notStorable);
export const upTo = (max: number) => z.string().max(max).refine(storable, notStorable);
export const country = z.string().regex(/^[A-Z]{2}$/, 'must be two upper-case letters');
export const assetCode = z
  .string()
  .regex(ASSET_CODE, 'must be three upper-case letters or X- followed by 2-10 upper-case letters or digits');
export const ipAddress = z.string().refine((v) => isIP(v) !== 0 && !v.includes('%'), 'must be an IPv4 or IPv6 address');
export const externalId = text(1, 256);

export const entityRefSchema = z.strictObject({
  kind: z.enum(['party', 'account', 'instrument']),
  external_id: externalId,
});
