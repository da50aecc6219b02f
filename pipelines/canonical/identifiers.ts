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
    const out: Record<string, unknown> = { ...data };
    const replace = (target: Record<string, unknown>, field: string, kind: string) => {
      const value = target[field];
      if (typeof value !== 'string') return;
      target[`${field}_hash`] = this.hash(tenantId, kind, value);
      delete target[field];
    };
    switch (family) {
      case 'party':
        if (Array.isArray(data.identifiers)) {
          out.identifiers = data.identifiers.map((identifier: Record<string, unknown>) => {
            const copy = { ...identifier };
            replace(copy, 'value', `identifier:${String(identifier.type)}`);
            return copy;
          });
        }
        break;
      case 'instrument':
        replace(out, 'masked_identifier', 'masked_identifier');
        replace(out, 'fingerprint', 'fingerprint');
        break;
      case 'movement':
      case 'control_event':
        replace(out, 'device_ref', 'device');
        replace(out, 'ip', 'ip');
        break;
      case 'account':
      case 'relationship':
        break;
    }
    return out;
  }
}

// Spelling that does not change identity is folded away before hashing: Unicode compatibility
// forms and surrounding space always; letter case for e-mail addresses; separators in phone
// numbers; IPv6 letter case.
function normalise(kind: string, value: string): string {
  const text = value.normalize('NFKC').trim();
  if (kind === 'identifier:email' || kind === 'ip') return text.toLowerCase();
  if (kind === 'identifier:phone') return text.replace(/[\s().-]/g, '');
  return text;
}
