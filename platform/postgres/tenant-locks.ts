import type { PoolClient } from './pool.ts';

// Locks tenants for the rest of the caller's transaction, in one order (hash, then id) so that two
// transactions never deadlock: those in `exclusive` exclusively, the others shared. A statement of
// its own: under READ COMMITTED a later statement reads with a snapshot taken after the locks,
// and so sees what every transaction that held them before committed. `namespace` is the first key
// of the advisory locks (one per use); `name` names the prepared statement.
export async function lockTenants(db: Pick<PoolClient, 'query'>, name: string, namespace: number, tenants: string[], exclusive: Set<string>): Promise<void> {
  await db.query({
    name,
    text: `SELECT CASE WHEN e THEN pg_advisory_xact_lock($1, hashtext(t)) ELSE pg_advisory_xact_lock_shared($1, hashtext(t)) END
             FROM (SELECT t, bool_or(e) AS e FROM unnest($2::text[], $3::boolean[]) AS u(t, e) GROUP BY t ORDER BY hashtext(t), t) AS ordered`,
    values: [namespace, tenants, tenants.map((tenant) => exclusive.has(tenant))],
  });
}
