// Expected declarations: a tenant says which declarations it sends every UTC day (scope and
// asset) and how long after the day ends each is due. The reconcile pipeline's timer checks the
// days that have come due (sweepExpectations): a day with no declaration covering it is a miss,
// announced as coverage.degraded; a declaration covering a missed day, arriving later, recovers
// it (coverage.recovered). Every statement filters on the tenant (the sweep reads across tenants
// by due time, and acts on each row within its own tenant).
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { expectationRequestSchema, type ExpectationView } from '../../schemas/reconciliation-expectations.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { enqueueEvents } from '../webhooks/outgoing-events.ts';
import type { Definition } from './ledger.ts';

type Db = Pick<Pool | PoolClient, 'query'>;
const DAY_MS = 86_400_000;

interface ExpectationRow {
  tenant_id: string;
  expectation_id: string;
  subject_kind: 'tenant' | 'account' | 'party';
  subject_id: string | null;
  asset: string;
  due_after_minutes: number;
  created_at: Date;
  next_day: string;
  next_due_at: Date;
}

const COLUMNS = `tenant_id, expectation_id, subject_kind, subject_id, asset, due_after_minutes, created_at, next_day::text AS next_day, next_due_at`;

const dayStart = (day: string) => new Date(`${day}T00:00:00.000Z`);
const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const dueAt = (day: string, minutes: number) => new Date(dayStart(day).getTime() + DAY_MS + minutes * 60_000);

export type ExpectationOutcome =
  | { kind: 'created'; view: ExpectationView }
  | { kind: 'invalid'; code: ErrorCode; errors: FieldError[] }
  | { kind: 'conflict'; detail: string };

export class Expectations {
  constructor(private readonly pool: Pool) {}

  async create(tenantId: string, body: unknown, registry: AssetRegistry, now: Date): Promise<ExpectationOutcome> {
    const parsed = expectationRequestSchema.safeParse(body);
    if (!parsed.success) return { kind: 'invalid', code: 'svc:validation/schema', errors: requestSchemaErrors(parsed.error) };
    const request = parsed.data;
    if (registry.scaleOf(request.asset) === undefined) {
      return { kind: 'invalid', code: 'svc:validation/schema', errors: [{ path: 'asset', code: 'svc:validation/schema', message: `asset ${request.asset} is not in the asset registry` }] };
    }
    const id = uuidv7(now.getTime());
    // Starting with the day in progress: its declaration is due after it ends.
    const day = dayOf(now);
    const { rowCount } = await this.pool.query(
      `INSERT INTO reconciliation_expectations (tenant_id, expectation_id, subject_kind, subject_id, asset, due_after_minutes, created_at, next_day, next_due_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9)
       ON CONFLICT (tenant_id, subject_kind, coalesce(subject_id, ''), asset) WHERE deleted_at IS NULL DO NOTHING`,
      [tenantId, id, request.scope.kind, request.scope.kind === 'tenant' ? null : request.scope.external_id, request.asset, request.due_after_minutes, now, day, dueAt(day, request.due_after_minutes)],
    );
    if (!rowCount) return { kind: 'conflict', detail: 'this scope and asset are already expected: delete that expectation first' };
    const { rows } = await this.pool.query<ExpectationRow>(`SELECT ${COLUMNS} FROM reconciliation_expectations WHERE tenant_id = $1 AND expectation_id = $2`, [tenantId, id]);
    return { kind: 'created', view: view(rows[0]!) };
  }

  // Oldest first, a page of `limit` rows after a position (created_at, expectation_id): a tenant
  // may expect a declaration per account, so the list is paged like every other.
  async list(tenantId: string, limit: number, after?: { at: string; id: string }): Promise<Array<{ row: { created_at: Date; expectation_id: string }; view: ExpectationView }>> {
    const { rows } = await this.pool.query<ExpectationRow>(
      `SELECT ${COLUMNS} FROM reconciliation_expectations
        WHERE tenant_id = $1 AND deleted_at IS NULL AND ($2::timestamptz IS NULL OR (created_at, expectation_id) > ($2::timestamptz, $3::uuid))
        ORDER BY created_at, expectation_id LIMIT $4`,
      [tenantId, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows.map((row) => ({ row, view: view(row) }));
  }

  async remove(tenantId: string, id: string, now: Date): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE reconciliation_expectations SET deleted_at = $3 WHERE tenant_id = $1 AND expectation_id = $2 AND deleted_at IS NULL`,
      [tenantId, id, now],
    );
    return (rowCount ?? 0) > 0;
  }
}

function view(row: ExpectationRow): ExpectationView {
  return {
    expectation_id: `${ID_PREFIXES.reconciliationExpectation}${row.expectation_id}`,
    scope: row.subject_kind === 'tenant' ? { kind: 'tenant' } : { kind: row.subject_kind, external_id: row.subject_id! },
    asset: row.asset,
    cadence: 'daily',
    due_after_minutes: row.due_after_minutes,
    created_at: row.created_at.toISOString(),
    next_due_at: row.next_due_at.toISOString(),
  };
}

// A declaration covers an expectation's day only when it checks the whole of it: both directions
// and no narrowing filter (movement types, rails, counterparty, import). Either basis counts.
const WHOLE_DECLARATION = `direction = 'both' AND movement_types IS NULL AND rails IS NULL AND counterparty IS NULL AND import_id IS NULL`;

// Advisory-lock namespace of an expectation's scope and asset (first key of the lock).
const COVERAGE_LOCK_NAMESPACE = 0x0c0e;

// Serialises a sweep's check of a scope and asset with a declaration's recovery of it: under READ
// COMMITTED each would otherwise miss the other's uncommitted row (the sweep a declaration being
// made, the declaration the miss being recorded), and the day would stay missed for good. A
// statement of its own, so the next one reads after the lock.
async function lockCoverage(db: Db, scope: Pick<ExpectationRow, 'tenant_id' | 'asset' | 'subject_kind' | 'subject_id'>): Promise<void> {
  await db.query({
    name: 'reconciliation-coverage-lock',
    text: `SELECT pg_advisory_xact_lock($1, hashtext(concat_ws(chr(31), $2::text, $3::text, $4::text, $5::text)))`,
    values: [COVERAGE_LOCK_NAMESPACE, scope.tenant_id, scope.asset, scope.subject_kind, scope.subject_id],
  });
}

// Checks the expectation days that have come due, one day per transaction, at most `max`
// attempts. Returns how many days were checked. One whose check fails is reported and left out
// for the rest of the sweep, so it cannot hold up every other tenant's; it stays due, and the
// next sweep tries it again.
export async function sweepExpectations(pool: Pool, now: Date, max: number, onError?: (error: unknown) => void): Promise<number> {
  let done = 0;
  const failed: string[] = [];
  for (let attempt = 0; attempt < max; attempt++) {
    let picked: string | undefined;
    try {
      if (!(await checkNextDue(pool, now, failed, (id) => (picked = id)))) break;
      done += 1;
    } catch (error) {
      if (picked === undefined) throw error;
      failed.push(picked);
      onError?.(error);
    }
  }
  return done;
}

async function checkNextDue(pool: Pool, now: Date, skip: string[], picked: (id: string) => void): Promise<boolean> {
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<ExpectationRow>(
      `SELECT ${COLUMNS} FROM reconciliation_expectations WHERE deleted_at IS NULL AND next_due_at <= $1 AND expectation_id <> ALL ($2::uuid[])
        ORDER BY next_due_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [now, skip],
    );
    const row = rows[0];
    if (!row) return false;
    picked(row.expectation_id);
    const from = dayStart(row.next_day);
    const to = new Date(from.getTime() + DAY_MS);
    await lockCoverage(db, row);
    const { rows: covering } = await db.query(
      `SELECT 1 FROM reconciliations
        WHERE tenant_id = $1 AND asset = $2 AND subject_kind = $3 AND subject_id IS NOT DISTINCT FROM $4
          AND (period_from < $5 OR (period_from = $5 AND from_inclusive)) AND period_to >= $6 AND ${WHOLE_DECLARATION}
        LIMIT 1`,
      [row.tenant_id, row.asset, row.subject_kind, row.subject_id, from, to],
    );
    if (covering.length === 0) {
      await db.query(
        `INSERT INTO reconciliation_expectation_misses (tenant_id, expectation_id, day, degraded_at) VALUES ($1, $2, $3::date, $4) ON CONFLICT DO NOTHING`,
        [row.tenant_id, row.expectation_id, row.next_day, now],
      );
      await enqueueEvents(db, [{ tenantId: row.tenant_id, type: 'coverage.degraded', data: missData(row, from, to, { due_at: row.next_due_at.toISOString() }) }], now);
    }
    const next = dayOf(to);
    await db.query(
      `UPDATE reconciliation_expectations SET next_day = $3::date, next_due_at = $4 WHERE tenant_id = $1 AND expectation_id = $2`,
      [row.tenant_id, row.expectation_id, next, dueAt(next, row.due_after_minutes)],
    );
    return true;
  });
}

// A new declaration recovers the missed days it covers (inside its own transaction): only a whole
// one (both directions, no narrowing filter), as only a whole one prevents a miss, and only the
// misses of expectations still in force.
export async function recoverMisses(db: Db, def: Definition, reconciliationId: string, now: Date): Promise<void> {
  if (def.direction !== 'both' || def.types !== null || def.rails !== null || def.counterparty !== null || def.importId !== null) return;
  await lockCoverage(db, { tenant_id: def.tenantId, asset: def.asset, subject_kind: def.subjectKind, subject_id: def.subjectId });
  const { rows } = await db.query<ExpectationRow & { day: string }>(
    `UPDATE reconciliation_expectation_misses m SET recovered_at = $6, recovered_by = $7
       FROM reconciliation_expectations e
      WHERE m.tenant_id = $1 AND e.tenant_id = $1 AND m.expectation_id = e.expectation_id AND m.recovered_at IS NULL AND e.deleted_at IS NULL
        AND e.asset = $2 AND e.subject_kind = $3 AND e.subject_id IS NOT DISTINCT FROM $4
        AND (m.day::timestamp AT TIME ZONE 'UTC') ${def.fromInclusive ? '>=' : '>'} $5 AND ((m.day + 1)::timestamp AT TIME ZONE 'UTC') <= $8
     RETURNING e.tenant_id, e.expectation_id, e.subject_kind, e.subject_id, e.asset, m.day::text AS day`,
    [def.tenantId, def.asset, def.subjectKind, def.subjectId, def.from, now, reconciliationId, def.to],
  );
  await enqueueEvents(
    db,
    rows.map((row) => {
      const from = dayStart(row.day);
      return {
        tenantId: row.tenant_id,
        type: 'coverage.recovered' as const,
        data: missData(row, from, new Date(from.getTime() + DAY_MS), { reconciliation_id: `${ID_PREFIXES.reconciliation}${reconciliationId}` }),
      };
    }),
    now,
  );
}

function missData<E extends Record<string, string>>(row: Pick<ExpectationRow, 'expectation_id' | 'subject_kind' | 'subject_id' | 'asset'>, from: Date, to: Date, extra: E) {
  return {
    reason: 'reconciliation_missing' as const,
    expectation_id: `${ID_PREFIXES.reconciliationExpectation}${row.expectation_id}`,
    scope: row.subject_kind === 'tenant' ? { kind: 'tenant' as const } : { kind: row.subject_kind, external_id: row.subject_id! },
    asset: row.asset,
    period: { from: from.toISOString(), to: to.toISOString() },
    ...extra,
  };
}
