import { randomFillSync } from 'node:crypto';

// Service-issued ids are a prefix from the spec followed by a UUIDv7: time-ordered (so indexes
// stay append-mostly), stored as a native uuid column, and accepted back bare or prefixed.
export const ID_PREFIXES = {
  event: 'evt_',
  alert: 'alrt_',
  episode: 'epsd_',
  webhookEndpoint: 'whk_',
  import: 'imp_',
  webhookEnvelope: 'whe_',
  webhookDelivery: 'whd_',
  // Ours: the spec shows no prefix for reconciliations.
  reconciliation: 'rcn_',
  reconciliationBreak: 'rbk_',
  reconciliationExpectation: 'rce_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Random bytes are drawn in blocks: one system call per 256 ids instead of one per id (imports
// make an id per row).
const POOL = Buffer.alloc(16 * 256);
let poolOffset = POOL.length;

export function uuidv7(nowMs: number = Date.now()): string {
  if (poolOffset === POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const bytes = Buffer.from(POOL.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The uuid inside a service id, accepting the prefixed form and the bare uuid; undefined when the
// text is not an id of this kind.
export function parseId(kind: IdKind, text: string): string | undefined {
  const prefix = ID_PREFIXES[kind];
  const bare = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  return UUID.test(bare) ? bare.toLowerCase() : undefined;
}
