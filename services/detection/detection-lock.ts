import type { PoolClient } from '../../platform/postgres/pool.ts';

// Advisory-lock namespace of the per-tenant detection lock (first key of pg_advisory_xact_lock).
const DETECTION_LOCK_NAMESPACE = 0x0de7;

// Everything that changes a tenant's alerts, episodes, cases and postures takes this lock for
// the rest of its transaction: writers are short (evaluation happens before, outside it), and one
// lock per tenant means grouping and bands never race and locks never deadlock.
export async function lockTenantDetection(db: PoolClient, tenantId: string): Promise<void> {
  await db.query({ name: 'detection-lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))', values: [DETECTION_LOCK_NAMESPACE, tenantId] });
}
