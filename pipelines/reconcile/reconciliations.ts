// Reconciliations of a tenant: a declaration is checked (scope known, asset held by it, money in
// the asset's scale), stored with its first result, and compared again whenever movements of its
// period arrive (worker.ts). A result is appended only when it differs from the latest; a status
// change is announced (coverage.degraded when it no longer matches, coverage.recovered when it
// matches again). Every statement filters on the tenant.
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import { ID_PREFIXES, parseId, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { checkMoneyScale } from '../../schemas/primitives/money.ts';
import { dateTimeMs } from '../../schemas/primitives/timestamp.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { reconciliationRequestSchema, type Explanation, type ReconciliationResult, type ReconciliationView } from '../../schemas/reconciliations.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import { enqueueEvents } from '../detect/outgoing-events.ts';
import { observe, unsettled, type Definition, type Observed } from './observe.ts';

export interface ReconciliationRow {
  tenant_id: string;
  reconciliation_id: string;
  subject_kind: Definition['subjectKind'];
  subject_id: string | null;
  direction: Definition['direction'];
  asset: string;
  scale: number;
  period_from: Date;
  from_inclusive: boolean;
  period_to: Date;
  to_inclusive: boolean;
  declared_count: bigint;
  declared_sum: string;
  declared_statuses: Record<string, number> | null;
  corrects: string | null;
  created_at: Date;
  status: 'matched' | 'mismatched';
  checked_at: Date;
}

interface ResultRow {
  seq: number;
  computed_at: Date;
  status: 'matched' | 'mismatched';
  observed_count: bigint;
  observed_sum: string;
  observed_statuses: Record<string, number>;
  explanation: Explanation;
}

export type CreateOutcome =
  | { kind: 'created'; view: ReconciliationView }
  | { kind: 'invalid'; code: ErrorCode; errors: FieldError[] }
  | { kind: 'not_found'; detail: string };

const COLUMNS = `tenant_id, reconciliation_id, subject_kind, subject_id, direction, asset, scale, period_from, from_inclusive, period_to, to_inclusive,
                 declared_count, declared_sum::text AS declared_sum, declared_statuses, corrects, created_at, status, checked_at`;

export function definitionOf(row: ReconciliationRow): Definition {
  return {
    tenantId: row.tenant_id,
    subjectKind: row.subject_kind,
    subjectId: row.subject_id,
    direction: row.direction,
    asset: row.asset,
    from: row.period_from,
    fromInclusive: row.from_inclusive,
    to: row.period_to,
    toInclusive: row.to_inclusive,
  };
}

// Declared against observed: the status and what explains a difference.
async function compare(db: Pick<Pool | PoolClient, 'query'>, def: Definition, declared: { count: number; sum: bigint; statuses: Record<string, number> | null }) {
  const observed = await observe(db, def);
  const statusesAgree = !declared.statuses || Object.entries(declared.statuses).every(([s, n]) => (observed.statuses[s] ?? 0) === n);
  const matched = observed.count === declared.count && observed.sum === declared.sum && statusesAgree;
  const explanation: Explanation = {
    count_difference: observed.count - declared.count,
    sum_difference: (observed.sum - declared.sum).toString(),
    unsettled: matched ? [] : await unsettled(db, def),
  };
  return { status: matched ? ('matched' as const) : ('mismatched' as const), observed, explanation };
}

export class Reconciliations {
  constructor(private readonly pool: Pool) {}

  async create(tenantId: string, body: unknown, registry: AssetRegistry, now: Date): Promise<CreateOutcome> {
    const parsed = reconciliationRequestSchema.safeParse(body);
    if (!parsed.success) return { kind: 'invalid', code: 'svc:validation/schema', errors: requestSchemaErrors(parsed.error) };
    const request = parsed.data;
    const errors: FieldError[] = [];
    const schemaError = (path: string, message: string) => errors.push({ path, code: 'svc:validation/schema', message });
    if (request.scope.kind === 'tenant' && request.direction !== 'both') schemaError('direction', 'a tenant scope counts every movement once: use both');
    if (dateTimeMs(request.period.to) < dateTimeMs(request.period.from)) schemaError('period.to', 'must not be before period.from');
    if (request.declared.sum.asset !== request.asset) schemaError('declared.sum.asset', 'must be the reconciliation\'s asset');
    const corrects = request.corrects === undefined ? null : (parseId('reconciliation', request.corrects) ?? false);
    if (corrects === false) schemaError('corrects', 'must be an rcn_ id');
    if (errors.length > 0) return { kind: 'invalid', code: 'svc:validation/schema', errors };
    const scale = checkMoneyScale(request.declared.sum, registry);
    if (scale) return { kind: 'invalid', code: 'svc:validation/money_scale_mismatch', errors: [{ path: `declared.sum.${scale.field}`, code: 'svc:validation/money_scale_mismatch', message: scale.message }] };

    const subjectId = request.scope.kind === 'tenant' ? null : request.scope.external_id;
    const held = await this.assetHeld(tenantId, request.scope.kind, subjectId, request.asset);
    if (held === 'unknown') return { kind: 'not_found', detail: `no ${request.scope.kind} with this external_id in this tenant` };
    if (!held) {
      return {
        kind: 'invalid',
        code: 'svc:reconciliation/asset_not_held',
        errors: [{ path: 'asset', code: 'svc:reconciliation/asset_not_held', message: `the ${request.scope.kind} holds no ${request.asset}: the declaration could only ever be compared with zero` }],
      };
    }
    if (corrects && !(await this.exists(tenantId, corrects))) return { kind: 'not_found', detail: 'the corrected reconciliation does not exist in this tenant' };

    const id = uuidv7(now.getTime());
    // Born stale: a movement of the period landing while this transaction runs cannot mark a row
    // it does not see yet, so the reconcile pipeline compares it once more after it commits.
    const def: Definition = {
      tenantId,
      subjectKind: request.scope.kind,
      subjectId,
      direction: request.direction,
      asset: request.asset,
      from: new Date(dateTimeMs(request.period.from)),
      fromInclusive: request.period.from_inclusive,
      to: new Date(dateTimeMs(request.period.to)),
      toInclusive: request.period.to_inclusive,
    };
    const declaredStatuses = request.declared.statuses ? (request.declared.statuses as Record<string, number>) : null;
    await withTransaction(this.pool, async (db) => {
      const result = await compare(db, def, { count: request.declared.count, sum: BigInt(request.declared.sum.value), statuses: declaredStatuses });
      await db.query(
        `INSERT INTO reconciliations (tenant_id, reconciliation_id, subject_kind, subject_id, direction, asset, scale, period_from, from_inclusive,
                                      period_to, to_inclusive, declared_count, declared_sum, declared_statuses, corrects, created_at, status, checked_at, stale)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $16, true)`,
        [tenantId, id, def.subjectKind, subjectId, def.direction, def.asset, request.declared.sum.scale, def.from, def.fromInclusive, def.to, def.toInclusive,
          request.declared.count, request.declared.sum.value, declaredStatuses ? JSON.stringify(declaredStatuses) : null, corrects, now, result.status],
      );
      await appendResult(db, id, 1, now, result);
    });
    return { kind: 'created', view: (await this.find(tenantId, id, { history: true }))! };
  }

  // Takes the stale reconciliation compared longest ago, clears its mark and compares it again,
  // in one transaction (a movement landing meanwhile marks it again, after this commits).
  // False when none is stale.
  async recheckNextStale(now: Date): Promise<boolean> {
    return withTransaction(this.pool, async (db) => {
      const { rows } = await db.query<ReconciliationRow>(
        `SELECT ${COLUMNS} FROM reconciliations WHERE stale ORDER BY checked_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      );
      const row = rows[0];
      if (!row) return false;
      await db.query(`UPDATE reconciliations SET stale = false, checked_at = $2 WHERE reconciliation_id = $1`, [row.reconciliation_id, now]);
      await compareAgain(db, row, now);
      return true;
    });
  }

  async find(tenantId: string, id: string, options: { history: boolean }): Promise<ReconciliationView | undefined> {
    const { rows } = await this.pool.query<ReconciliationRow>(`SELECT ${COLUMNS} FROM reconciliations WHERE tenant_id = $1 AND reconciliation_id = $2`, [tenantId, id]);
    const row = rows[0];
    if (!row) return undefined;
    const results = await this.results([id], options.history);
    return reconciliationView(row, results.get(id) ?? [], options.history);
  }

  // Newest first; `after` is the (created_at, id) of the last row of the previous page.
  async list(
    tenantId: string,
    filters: { status?: 'matched' | 'mismatched'; from?: Date; to?: Date; subjectKind?: string; subjectId?: string },
    limit: number,
    after?: { at: string; id: string },
  ): Promise<ReconciliationRow[]> {
    const { rows } = await this.pool.query<ReconciliationRow>(
      `SELECT ${COLUMNS} FROM reconciliations
        WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR period_to >= $3) AND ($4::timestamptz IS NULL OR period_from <= $4)
          AND ($5::text IS NULL OR subject_kind = $5) AND ($6::text IS NULL OR subject_id = $6)
          AND ($7::timestamptz IS NULL OR (created_at, reconciliation_id) < ($7::timestamptz, $8::uuid))
        ORDER BY created_at DESC, reconciliation_id DESC LIMIT $9`,
      [tenantId, filters.status ?? null, filters.from ?? null, filters.to ?? null, filters.subjectKind ?? null, filters.subjectId ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  async views(rows: ReconciliationRow[]): Promise<ReconciliationView[]> {
    const results = await this.results(rows.map((r) => r.reconciliation_id), false);
    return rows.map((row) => reconciliationView(row, results.get(row.reconciliation_id) ?? [], false));
  }

  private async results(ids: string[], all: boolean): Promise<Map<string, ResultRow[]>> {
    const { rows } = await this.pool.query<ResultRow & { reconciliation_id: string }>(
      `SELECT reconciliation_id, seq, computed_at, status, observed_count, observed_sum::text AS observed_sum, observed_statuses, explanation
         FROM reconciliation_results r
        WHERE reconciliation_id = ANY ($1::uuid[])
          AND ($2 OR seq = (SELECT max(seq) FROM reconciliation_results l WHERE l.reconciliation_id = r.reconciliation_id))
        ORDER BY reconciliation_id, seq`,
      [ids, all],
    );
    const byId = new Map<string, ResultRow[]>();
    for (const row of rows) byId.set(row.reconciliation_id, [...(byId.get(row.reconciliation_id) ?? []), row]);
    return byId;
  }

  private async exists(tenantId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM reconciliations WHERE tenant_id = $1 AND reconciliation_id = $2`, [tenantId, id]);
    return (rowCount ?? 0) > 0;
  }

  // Whether the scope holds the asset: an account in it, a party with an account in it or a
  // movement in it, the tenant with any of those. 'unknown' for a subject the tenant never sent.
  private async assetHeld(tenantId: string, kind: Definition['subjectKind'], subjectId: string | null, asset: string): Promise<boolean | 'unknown'> {
    if (kind === 'account') {
      const { rows } = await this.pool.query<{ asset: string; moved: boolean }>(
        `SELECT data->>'asset' AS asset,
                EXISTS (SELECT 1 FROM canonical_movements WHERE tenant_id = $1 AND amount_asset = $3 AND (debit_account_id = $2 OR credit_account_id = $2)) AS moved
           FROM canonical_entities WHERE tenant_id = $1 AND object = 'account' AND external_id = $2`,
        [tenantId, subjectId, asset],
      );
      return rows[0] ? rows[0].asset === asset || rows[0].moved : 'unknown';
    }
    if (kind === 'party') {
      const { rows } = await this.pool.query<{ known: boolean; held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM canonical_entities WHERE tenant_id = $1 AND object = 'party' AND external_id = $2) AS known,
                EXISTS (SELECT 1 FROM canonical_entities WHERE tenant_id = $1 AND object = 'account' AND data->>'holder_party_id' = $2 AND data->>'asset' = $3)
                OR EXISTS (SELECT 1 FROM canonical_movements WHERE tenant_id = $1 AND amount_asset = $3 AND (debit_party_id = $2 OR credit_party_id = $2)) AS held`,
        [tenantId, subjectId, asset],
      );
      return rows[0]!.known ? rows[0]!.held : 'unknown';
    }
    const { rows } = await this.pool.query<{ held: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM canonical_entities WHERE tenant_id = $1 AND object = 'account' AND data->>'asset' = $2)
              OR EXISTS (SELECT 1 FROM canonical_movements WHERE tenant_id = $1 AND amount_asset = $2) AS held`,
      [tenantId, asset],
    );
    return rows[0]!.held;
  }
}

// Appends and announces a result that differs from the latest (the row is locked by the caller).
async function compareAgain(db: PoolClient, row: ReconciliationRow, now: Date): Promise<void> {
  const { rows: latest } = await db.query<ResultRow>(
    `SELECT seq, computed_at, status, observed_count, observed_sum::text AS observed_sum, observed_statuses, explanation
       FROM reconciliation_results WHERE reconciliation_id = $1 ORDER BY seq DESC LIMIT 1`,
    [row.reconciliation_id],
  );
  const result = await compare(db, definitionOf(row), { count: Number(row.declared_count), sum: BigInt(row.declared_sum), statuses: row.declared_statuses });
  const previous = latest[0];
  if (previous && sameResult(previous, result)) return;
  await appendResult(db, row.reconciliation_id, (previous?.seq ?? 0) + 1, now, result);
  if (previous?.status === result.status) return;
  await db.query(`UPDATE reconciliations SET status = $2 WHERE reconciliation_id = $1`, [row.reconciliation_id, result.status]);
  await enqueueEvents(
    db,
    [
      {
        tenantId: row.tenant_id,
        type: result.status === 'mismatched' ? 'coverage.degraded' : 'coverage.recovered',
        data: {
          reason: 'reconciliation',
          reconciliation_id: `${ID_PREFIXES.reconciliation}${row.reconciliation_id}`,
          status: result.status,
          count_difference: result.explanation.count_difference,
          sum_difference: result.explanation.sum_difference,
          asset: row.asset,
        },
      },
    ],
    now,
  );
}

async function appendResult(db: PoolClient, id: string, seq: number, now: Date, result: { status: string; observed: Observed; explanation: Explanation }): Promise<void> {
  await db.query(
    `INSERT INTO reconciliation_results (reconciliation_id, seq, computed_at, status, observed_count, observed_sum, observed_statuses, explanation)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, seq, now, result.status, result.observed.count, result.observed.sum.toString(), JSON.stringify(result.observed.statuses), JSON.stringify(result.explanation)],
  );
}

function sameResult(previous: ResultRow, next: { status: string; observed: Observed; explanation: Explanation }): boolean {
  return (
    previous.status === next.status &&
    Number(previous.observed_count) === next.observed.count &&
    previous.observed_sum === next.observed.sum.toString() &&
    JSON.stringify(sortKeys(previous.observed_statuses)) === JSON.stringify(sortKeys(next.observed.statuses)) &&
    JSON.stringify(previous.explanation.unsettled.map((u) => [u.reason, u.count])) === JSON.stringify(next.explanation.unsettled.map((u) => [u.reason, u.count]))
  );
}

const sortKeys = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

function resultView(row: ResultRow, asset: string, scale: number): ReconciliationResult {
  return {
    status: row.status,
    computed_at: row.computed_at.toISOString(),
    observed: { count: Number(row.observed_count), sum: { value: row.observed_sum, asset, scale }, statuses: row.observed_statuses },
    explanation: row.explanation,
  };
}

export function reconciliationView(row: ReconciliationRow, results: ResultRow[], withHistory: boolean): ReconciliationView {
  const latest = results.at(-1)!;
  return {
    reconciliation_id: `${ID_PREFIXES.reconciliation}${row.reconciliation_id}`,
    scope: row.subject_kind === 'tenant' ? { kind: 'tenant' } : { kind: row.subject_kind, external_id: row.subject_id! },
    direction: row.direction,
    asset: row.asset,
    period: { from: row.period_from.toISOString(), to: row.period_to.toISOString(), from_inclusive: row.from_inclusive, to_inclusive: row.to_inclusive },
    declared: { count: Number(row.declared_count), sum: { value: row.declared_sum, asset: row.asset, scale: row.scale }, statuses: row.declared_statuses },
    corrects: row.corrects ? `${ID_PREFIXES.reconciliation}${row.corrects}` : null,
    created_at: row.created_at.toISOString(),
    status: row.status,
    result: resultView(latest, row.asset, row.scale),
    ...(withHistory ? { history: results.map((r) => resultView(r, row.asset, row.scale)) } : {}),
  };
}
