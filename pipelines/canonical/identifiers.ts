import { createHmac } from 'node:crypto';
import type { Family } from '../../schemas/families/index.ts';

// Values that identify a person or a credential are kept only as keyed hashes: HMAC-SHA256 under
// a per-tenant key derived from the master key. Equal values give equal hashes within a tenant
// (so the network can link parties that share them) and unrelated hashes across tenants.
export class IdentifierHasher {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly masterKey: Buffer) {}

  hash(tenantId: string, kind: string, value: string): string {
    let key = this.keys.get(tenantId);
    if (!key) {
      key = createHmac('sha256', this.masterKey).update(`identifier-hash:v1:${tenantId}`).digest();
      this.keys.set(tenantId, key);
    }
    return `hmac-sha256:${createHmac('sha256', key).update(`${kind}\u0000${normalise(kind, value)}`).digest('hex')}`;
  }

  // The family's data with every identifying value replaced by `<field>_hash`.
  hashData(tenantId: string, family: Family, data: Record<string, unknown>): Record<string, unknown> {
    switch (family) {
      case 'party': {
        if (!Array.isArray(data.identifiers)) return { ...data };
        const out: Record<string, unknown> = { ...data };
        out.identifiers = data.identifiers.map((identifier: Record<string, unknown>) =>
          this.replaced(tenantId, identifier, [['value', `identifier:${String(identifier.type)}`]]),
        );
        return out;
      }
      case 'instrument':
        return this.replaced(tenantId, data, INSTRUMENT_FIELDS);
      case 'movement':
      case 'control_event':
        return this.replaced(tenantId, data, FACT_FIELDS);
      case 'account':
      case 'relationship':
        return { ...data };
    }
  }

  // A copy of `target` without each field whose value is a string, and with `<field>_hash` set
  // to its hash (appended, in the order given, or in place where `target` has that key already).
  // Built key by key: a copy with the fields deleted afterwards is an object in dictionary mode,
  // which JSON.stringify serialises several times slower (every event's data is serialised).
  private replaced(tenantId: string, target: Record<string, unknown>, fields: ReadonlyArray<readonly [string, string]>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key in target) {
      if (!Object.hasOwn(target, key)) continue;
      if (typeof target[key] === 'string' && fields.some(([field]) => field === key)) continue;
      // A member named __proto__ (JSON.parse makes it an own member) stays one, as a spread keeps it.
      if (key === '__proto__') Object.defineProperty(out, key, { value: target[key], enumerable: true, writable: true, configurable: true });
      else out[key] = target[key];
    }
    for (const [field, kind] of fields) {
      const value = target[field];
      if (typeof value === 'string') out[`${field}_hash`] = this.hash(tenantId, kind, value);
    }
    return out;
  }
}

const INSTRUMENT_FIELDS = [
  ['masked_identifier', 'masked_identifier'],
  ['fingerprint', 'fingerprint'],
] as const;
const FACT_FIELDS = [
  ['device_ref', 'device'],
  ['ip', 'ip'],
] as const;

// Spelling that does not change identity is folded away before hashing: Unicode compatibility
// forms and surrounding space always; letter case for e-mail addresses; separators in phone
// numbers; IPv6 letter case.
function normalise(kind: string, value: string): string {
  const text = value.normalize('NFKC').trim();
  if (kind === 'identifier:email' || kind === 'ip') return text.toLowerCase();
  if (kind === 'identifier:phone') return text.replace(/[\s().-]/g, '');
  return text;
}
