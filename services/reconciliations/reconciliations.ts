// Reconciliations of a tenant: a declaration is checked (declaration.ts), stored with its first
// result, and compared again whenever movements of its scope arrive (pipeline.ts). A result is
// appended only when it differs from the latest. A first result that mismatches, and every status
// change, is announced (coverage.degraded when it does not match, coverage.recovered when it
// matches again) and opens or resolves a break (breaks.ts). A declaration carrying a customer
// reference already used answers the original when its content is the same and is refused
// otherwise. Every statement filters on the tenant.
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import { ID_PREFIXES, uuidv7 } from '../../platform/ids.ts';
import { withTransaction, type Pool, type PoolClient } from '../../platform/postgres/pool.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import type { FieldError } from '../../schemas/problem.ts';
import type { Explanation, ReconciliationResult, ReconciliationView } from '../../schemas/reconciliations.ts';
import { enqueueEvents } from '../webhooks/outgoing-events.ts';
import { Breaks, openBreak, resolveBySystem } from './breaks.ts';
import { differenceItems, type DifferenceItem, type ItemsPosition } from './items.ts';
import { parseDeclaration, type Declaration, type DeclaredStatuses } from './declaration.ts';
import { Expectations, recoverMisses } from './expectations.ts';
import { observe, type Definition, type Observed } from './observe.ts';
import { countWithin, sumWithin, type Tolerance } from './tolerance.ts';
import { unsettled } from './unsettled.ts';

type Db = Pick<Pool | PoolClient, 'query'>;

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
  // {status: {count, sum (minor units as text) | null}}; before 0019, {status: count}.
  declared_statuses: Record<string, number | { count: number; sum: string | null }> | null;
  counted_statuses: string[];
  basis: Definition['basis'];
  movement_types: string[] | null;
  rails: string[] | null;
  counterparty: string | null;
  import_id: string | null;
  tolerance_minor: string | null;
  tolerance_bps: number | null;
  tolerance_count: string;
  customer_reference: string | null;
  request_hash: Buffer | null;
  corrects: string | null;
  created_at: Date;
  status: 'matched' | 'mismatched';
  checked_at: Date;
}

interface ObservedDetail {
  status_sums: Record<string, string>;
  base_sum: { value: string | null; asset: string; scale: number };
}

// An explanation as stored with its result: the sum difference in minor units of the
// reconciliation's asset, which the view writes as Money.
type StoredExplanation = Omit<Explanation, 'sum_difference'> & { sum_difference: string };

interface ResultRow {
  seq: number;
  computed_at: Date;
  status: 'matched' | 'mismatched';
  observed_count: bigint;
  observed_sum: string;
  observed_statuses: Record<string, number>;
  observed_detail: ObservedDetail | null;
  explanation: StoredExplanation;
}

interface Result {
  status: 'matched' | 'mismatched';
  observed: Observed;
  explanation: StoredExplanation;
}

export type CreateOutcome =
  | { kind: 'created'; view: ReconciliationView }
  | { kind: 'repeated'; view: ReconciliationView }
  | { kind: 'conflict'; detail: string }
  | { kind: 'invalid'; code: ErrorCode; errors: FieldError[] }
  | { kind: 'not_found'; detail: string };

const COLUMNS = `tenant_id, reconciliation_id, subject_kind, subject_id, direction, asset, scale, period_from, from_inclusive, period_to, to_inclusive,
                 declared_count, declared_sum::text AS declared_sum, declared_statuses, counted_statuses, basis, movement_types, rails, counterparty,
                 import_id, tolerance_minor::text AS tolerance_minor, tolerance_bps, tolerance_count::text AS tolerance_count, customer_reference,
                 request_hash, corrects, created_at, status, checked_at`;

const RESULT_COLUMNS = `seq, computed_at, status, observed_count, observed_sum::text AS observed_sum, observed_statuses, observed_detail, explanation`;

function definitionOf(row: ReconciliationRow): Definition {
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
    basis: row.basis,
    countedStatuses: row.counted_statuses,
    types: row.movement_types,
    rails: row.rails,
    counterparty: row.counterparty,
    importId: row.import_id,
  };
}

function declaredStatusesOf(row: ReconciliationRow): DeclaredStatuses | null {
  if (!row.declared_statuses) return null;
  return Object.fromEntries(
    Object.entries(row.declared_statuses).map(([status, figure]) =>
      typeof figure === 'number' ? [status, { count: figure, sum: null }] : [status, { count: figure.count, sum: figure.sum === null ? null : BigInt(figure.sum) }],
    ),
  );
}

function toleranceOf(row: ReconciliationRow): Tolerance {
  return { sumMinor: row.tolerance_minor === null ? null : BigInt(row.tolerance_minor), sumBps: row.tolerance_bps, count: Number(row.tolerance_count) };
}

// Declared against observed: the status (within the tolerance) and what explains a difference.
async function compare(db: Db, def: Definition, declared: { count: number; sum: bigint; statuses: DeclaredStatuses | null; tolerance: Tolerance }): Promise<Result> {
  const observed = await observe(db, def);
  const figures = Object.entries(declared.statuses ?? {}).map(([status, figure]) => ({ figure, count: observed.statuses[status] ?? 0, sum: observed.statusSums[status] ?? 0n }));
  const exact =
    observed.count === declared.count &&
    observed.sum === declared.sum &&
    figures.every(({ figure, count, sum }) => count === figure.count && (figure.sum === null || sum === figure.sum));
  const matched =
    countWithin(declared.tolerance, declared.count, observed.count) &&
    sumWithin(declared.tolerance, declared.sum, observed.sum) &&
    figures.every(({ figure, count, sum }) => countWithin(declared.tolerance, figure.count, count) && (figure.sum === null || sumWithin(declared.tolerance, figure.sum, sum)));
  const explained = matched ? { unsettled: [], truncated: false } : await unsettled(db, def);
  const explanation: StoredExplanation = {
    count_difference: observed.count - declared.count,
    sum_difference: (observed.sum - declared.sum).toString(),
    ...(matched && !exact ? { within_tolerance: true } : {}),
    ...(explained.truncated ? { unsettled_truncated: true } : {}),
    unsettled: explained.unsettled,
  };
  return { status: matched ? 'matched' : 'mismatched', observed, explanation };
}

// How long a recheck's claim keeps other rechecks off its reconciliation: longer than any
// comparison; a recheck that died with it only delays the next by this much.
const RECHECK_CLAIM_S = 300;

export class Reconciliations {
  readonly breaks: Breaks;
  readonly expectations: Expectations;

  constructor(private readonly pool: Pool) {
    this.breaks = new Breaks(pool);
    this.expectations = new Expectations(pool);
  }

  // Every difference item of a reconciliation, a page at a time (items.ts).
  async items(tenantId: string, id: string, after: ItemsPosition | null, limit: number): Promise<{ items: DifferenceItem[]; next: ItemsPosition | null } | undefined> {
    const row = await this.row(tenantId, id);
    return row && differenceItems(this.pool, definitionOf(row), row.scale, after, limit);
  }

  async create(tenantId: string, body: unknown, registry: AssetRegistry, now: Date): Promise<CreateOutcome> {
    const parsed = parseDeclaration(body, registry);
    if (!parsed.ok) return { kind: 'invalid', code: parsed.code, errors: parsed.errors };
    const declaration = parsed.declaration;
    if (declaration.customerReference !== null) {
      const earlier = await this.byReference(tenantId, declaration);
      if (earlier) return earlier;
    }
    const def: Definition = { tenantId, ...declaration.definition };
    const held = await this.assetHeld(tenantId, def.subjectKind, def.subjectId, def.asset);
    if (held === 'unknown') return { kind: 'not_found', detail: `no ${def.subjectKind} with this external_id in this tenant` };
    if (!held) {
      return {
        kind: 'invalid',
        code: 'svc:reconciliation/asset_not_held',
        errors: [{ path: 'asset', code: 'svc:reconciliation/asset_not_held', message: `the ${def.subjectKind} holds no ${def.asset}: the declaration could only ever be compared with zero` }],
      };
    }
    if (declaration.corrects && !(await this.exists(tenantId, declaration.corrects))) return { kind: 'not_found', detail: 'the corrected reconciliation does not exist in this tenant' };
    if (def.importId && !(await this.importExists(tenantId, def.importId))) return { kind: 'not_found', detail: 'no import with this id in this tenant' };

    const id = uuidv7(now.getTime());
    try {
      await withTransaction(this.pool, async (db) => {
        const corrects = declaration.corrects && (await standingFor(db, tenantId, declaration.corrects));
        const result = await compare(db, def, declaration);
        await insertDeclaration(db, id, def, { ...declaration, corrects }, now, result.status);
        await appendResult(db, tenantId, id, 1, now, result);
        if (corrects) await resolveBySystem(db, tenantId, corrects, `superseded by correction ${ID_PREFIXES.reconciliation}${id}`, now);
        if (result.status === 'mismatched') await announce(db, tenantId, id, { asset: def.asset, scale: declaration.scale }, result, now);
        await recoverMisses(db, def, id, now);
      });
    } catch (error) {
      // Another request took the reference between our look-up and our insert.
      if ((error as { code?: string; constraint?: string }).constraint === 'reconciliations_reference') {
        const earlier = await this.byReference(tenantId, declaration);
        if (earlier) return earlier;
      }
      throw error;
    }
    return { kind: 'created', view: (await this.find(tenantId, id, { history: true }))! };
  }

  // The declaration already made under this customer reference: the same one again, or a conflict.
  private async byReference(tenantId: string, declaration: Declaration): Promise<CreateOutcome | undefined> {
    const { rows } = await this.pool.query<{ reconciliation_id: string; request_hash: Buffer }>(
      `SELECT reconciliation_id, request_hash FROM reconciliations WHERE tenant_id = $1 AND customer_reference = $2`,
      [tenantId, declaration.customerReference],
    );
    const earlier = rows[0];
    if (!earlier) return undefined;
    if (!earlier.request_hash.equals(declaration.hash)) {
      return { kind: 'conflict', detail: `customer_reference ${declaration.customerReference} already names ${ID_PREFIXES.reconciliation}${earlier.reconciliation_id}, with other content` };
    }
    return { kind: 'repeated', view: (await this.find(tenantId, earlier.reconciliation_id, { history: true }))! };
  }

  // Takes the stale reconciliation compared longest ago and compares it again. False when none is
  // stale. First a claim commits (checking_until): from then on markStale writes its mark on this
  // reconciliation even though it is stale, waiting for the comparison's row lock, so a movement
  // the comparison's snapshot missed marks it again once the comparison commits. A mark that
  // skipped it was made before the claim, of a movement committed before the comparison began.
  // Then one transaction locks it, clears the mark and the claim, and compares. One whose
  // comparison fails stays stale but goes to the back of the queue, so it cannot hold up every
  // other tenant's; the failure is thrown for the caller to log.
  async recheckNextStale(now: Date): Promise<boolean> {
    const { rows: claimed } = await this.pool.query<{ tenant_id: string; reconciliation_id: string }>(
      `UPDATE reconciliations SET checking_until = $1::timestamptz + interval '${RECHECK_CLAIM_S} seconds'
        WHERE reconciliation_id = (
          SELECT reconciliation_id FROM reconciliations WHERE stale AND (checking_until IS NULL OR checking_until < $1)
           ORDER BY checked_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING tenant_id, reconciliation_id`,
      [now],
    );
    const picked = claimed[0]?.reconciliation_id;
    if (picked === undefined) return false;
    const tenantId = claimed[0]!.tenant_id;
    try {
      await withTransaction(this.pool, async (db) => {
        const { rows } = await db.query<ReconciliationRow>(`SELECT ${COLUMNS} FROM reconciliations WHERE tenant_id = $1 AND reconciliation_id = $2 FOR UPDATE`, [tenantId, picked]);
        const row = rows[0]!;
        await db.query(`UPDATE reconciliations SET stale = false, checking_until = NULL, checked_at = $3 WHERE tenant_id = $1 AND reconciliation_id = $2`, [
          row.tenant_id,
          picked,
          now,
        ]);
        // A declaration a correction replaced keeps its last result: comparing it again would open
        // a break, and announce a change, on what the customer no longer declares.
        const { rowCount: corrected } = await db.query(`SELECT 1 FROM reconciliations WHERE tenant_id = $1 AND corrects = $2 LIMIT 1`, [row.tenant_id, picked]);
        if (!corrected) await compareAgain(db, row, now);
      });
      return true;
    } catch (error) {
      await this.pool.query(`UPDATE reconciliations SET checked_at = $3, checking_until = NULL WHERE tenant_id = $1 AND reconciliation_id = $2`, [tenantId, picked, now]);
      throw error;
    }
  }

  async find(tenantId: string, id: string, options: { history: boolean }): Promise<ReconciliationView | undefined> {
    const row = await this.row(tenantId, id);
    if (!row) return undefined;
    const results = await this.results(tenantId, [id], options.history);
    return reconciliationView(row, results.get(id) ?? [], options.history);
  }

  async row(tenantId: string, id: string): Promise<ReconciliationRow | undefined> {
    const { rows } = await this.pool.query<ReconciliationRow>(`SELECT ${COLUMNS} FROM reconciliations WHERE tenant_id = $1 AND reconciliation_id = $2`, [tenantId, id]);
    return rows[0];
  }

  // Newest first; `after` is the (created_at, id) of the last row of the previous page. `from` and
  // `to` keep the periods holding an instant in [from, to], by each period's own bounds: a day
  // ending at midnight (exclusive) is not in a window starting then.
  async list(
    tenantId: string,
    filters: { status?: 'matched' | 'mismatched'; from?: Date; to?: Date; subjectKind?: string; subjectId?: string },
    limit: number,
    after?: { at: string; id: string },
  ): Promise<ReconciliationRow[]> {
    const { rows } = await this.pool.query<ReconciliationRow>(
      `SELECT ${COLUMNS} FROM reconciliations
        WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR period_to > $3 OR (period_to = $3 AND to_inclusive))
          AND ($4::timestamptz IS NULL OR period_from < $4 OR (period_from = $4 AND from_inclusive))
          AND ($5::text IS NULL OR subject_kind = $5) AND ($6::text IS NULL OR subject_id = $6)
          AND ($7::timestamptz IS NULL OR (created_at, reconciliation_id) < ($7::timestamptz, $8::uuid))
        ORDER BY created_at DESC, reconciliation_id DESC LIMIT $9`,
      [tenantId, filters.status ?? null, filters.from ?? null, filters.to ?? null, filters.subjectKind ?? null, filters.subjectId ?? null, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows;
  }

  // Views of one tenant's rows (a listing), each with its latest result.
  async views(tenantId: string, rows: ReconciliationRow[]): Promise<ReconciliationView[]> {
    const results = await this.results(tenantId, rows.map((r) => r.reconciliation_id), false);
    return rows.map((row) => reconciliationView(row, results.get(row.reconciliation_id) ?? [], false));
  }

  private async results(tenantId: string, ids: string[], all: boolean): Promise<Map<string, ResultRow[]>> {
    const { rows } = await this.pool.query<ResultRow & { reconciliation_id: string }>(
      `SELECT reconciliation_id, ${RESULT_COLUMNS}
         FROM reconciliation_results r
        WHERE tenant_id = $1 AND reconciliation_id = ANY ($2::uuid[])
          AND ($3 OR seq = (SELECT max(seq) FROM reconciliation_results l WHERE l.tenant_id = r.tenant_id AND l.reconciliation_id = r.reconciliation_id))
        ORDER BY reconciliation_id, seq`,
      [tenantId, ids, all],
    );
    const byId = new Map<string, ResultRow[]>();
    for (const row of rows) byId.set(row.reconciliation_id, [...(byId.get(row.reconciliation_id) ?? []), row]);
    return byId;
  }

  private async importExists(tenantId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM imports WHERE tenant_id = $1 AND import_id = $2`, [tenantId, id]);
    return (rowCount ?? 0) > 0;
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

// The declaration that stands for `id` now, which a correction of `id` replaces: `id` itself, or
// the latest correction down its chain (a customer correcting the same declaration twice means
// the second to replace the first, not two live declarations of one scope and period). Each is
// locked, and its re-comparison mark cleared, before its corrections are looked for: a recheck of
// it already running commits first (its break is then resolved), one waiting for the lock finds
// it corrected and compares nothing (recheckNextStale), and of two corrections made at once the
// second waits and then replaces the first.
async function standingFor(db: Db, tenantId: string, id: string): Promise<string> {
  for (let current = id; ; ) {
    await db.query(`UPDATE reconciliations SET stale = false WHERE tenant_id = $1 AND reconciliation_id = $2`, [tenantId, current]);
    const { rows } = await db.query<{ reconciliation_id: string }>(
      `SELECT reconciliation_id FROM reconciliations WHERE tenant_id = $1 AND corrects = $2 ORDER BY created_at DESC, reconciliation_id DESC LIMIT 1`,
      [tenantId, current],
    );
    if (!rows[0]) return current;
    current = rows[0].reconciliation_id;
  }
}

async function insertDeclaration(db: Db, id: string, def: Definition, declaration: Declaration, now: Date, status: Result['status']): Promise<void> {
  const statuses = declaration.statuses
    ? JSON.stringify(Object.fromEntries(Object.entries(declaration.statuses).map(([s, f]) => [s, { count: f.count, sum: f.sum === null ? null : f.sum.toString() }])))
    : null;
  // Born stale: a movement of the period landing while this transaction runs cannot mark a row
  // it does not see yet, so the reconcile pipeline compares it once more after it commits.
  await db.query(
    `INSERT INTO reconciliations (tenant_id, reconciliation_id, subject_kind, subject_id, direction, asset, scale, period_from, from_inclusive,
                                  period_to, to_inclusive, declared_count, declared_sum, declared_statuses, corrects, created_at, status, checked_at, stale,
                                  counted_statuses, basis, movement_types, rails, counterparty, import_id, tolerance_minor, tolerance_bps, tolerance_count,
                                  customer_reference, request_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $16, true, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`,
    [def.tenantId, id, def.subjectKind, def.subjectId, def.direction, def.asset, declaration.scale, def.from, def.fromInclusive, def.to, def.toInclusive,
      declaration.count, declaration.sum.toString(), statuses, declaration.corrects, now, status,
      def.countedStatuses, def.basis, def.types, def.rails, def.counterparty, def.importId, declaration.tolerance.sumMinor?.toString() ?? null,
      declaration.tolerance.sumBps, declaration.tolerance.count, declaration.customerReference, declaration.hash],
  );
}

// Appends a result that differs from the latest; a status change is announced and opens or
// resolves the break (the row is locked by the caller).
async function compareAgain(db: PoolClient, row: ReconciliationRow, now: Date): Promise<void> {
  const { rows: latest } = await db.query<ResultRow>(
    `SELECT ${RESULT_COLUMNS} FROM reconciliation_results WHERE tenant_id = $1 AND reconciliation_id = $2 ORDER BY seq DESC LIMIT 1`,
    [row.tenant_id, row.reconciliation_id],
  );
  const declared = { count: Number(row.declared_count), sum: BigInt(row.declared_sum), statuses: declaredStatusesOf(row), tolerance: toleranceOf(row) };
  const result = await compare(db, definitionOf(row), declared);
  const previous = latest[0];
  if (previous && sameResult(previous, result)) return;
  await appendResult(db, row.tenant_id, row.reconciliation_id, (previous?.seq ?? 0) + 1, now, result);
  if (previous?.status === result.status) return;
  await db.query(`UPDATE reconciliations SET status = $3 WHERE tenant_id = $1 AND reconciliation_id = $2`, [row.tenant_id, row.reconciliation_id, result.status]);
  if (result.status === 'matched') await resolveBySystem(db, row.tenant_id, row.reconciliation_id, 'matched on re-comparison', now);
  await announce(db, row.tenant_id, row.reconciliation_id, { asset: row.asset, scale: row.scale }, result, now);
}

// A result that does not match (first or again) opens a break; either status is announced.
async function announce(db: Db, tenantId: string, id: string, { asset, scale }: { asset: string; scale: number }, result: Result, now: Date): Promise<void> {
  if (result.status === 'mismatched') {
    await openBreak(db, tenantId, id, { count: result.explanation.count_difference, sum: result.explanation.sum_difference }, now);
  }
  const data = {
    reason: 'reconciliation' as const,
    reconciliation_id: `${ID_PREFIXES.reconciliation}${id}`,
    count_difference: result.explanation.count_difference,
    sum_difference: { value: result.explanation.sum_difference, asset, scale },
    asset,
  };
  await enqueueEvents(
    db,
    [
      result.status === 'mismatched'
        ? { tenantId, type: 'coverage.degraded', data: { ...data, status: result.status } }
        : { tenantId, type: 'coverage.recovered', data: { ...data, status: result.status } },
    ],
    now,
  );
}

function detailOf(observed: Observed): ObservedDetail {
  return {
    status_sums: Object.fromEntries(Object.entries(observed.statusSums).map(([s, v]) => [s, v.toString()])),
    base_sum: { value: observed.base.value === null ? null : observed.base.value.toString(), asset: observed.base.asset, scale: observed.base.scale },
  };
}

async function appendResult(db: Db, tenantId: string, id: string, seq: number, now: Date, result: Result): Promise<void> {
  await db.query(
    `INSERT INTO reconciliation_results (tenant_id, reconciliation_id, seq, computed_at, status, observed_count, observed_sum, observed_statuses, observed_detail, explanation)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [tenantId, id, seq, now, result.status, result.observed.count, result.observed.sum.toString(), JSON.stringify(result.observed.statuses), JSON.stringify(detailOf(result.observed)), JSON.stringify(result.explanation)],
  );
}

function sameResult(previous: ResultRow, next: Result): boolean {
  return (
    previous.status === next.status &&
    Number(previous.observed_count) === next.observed.count &&
    previous.observed_sum === next.observed.sum.toString() &&
    JSON.stringify(sortKeys(previous.observed_statuses)) === JSON.stringify(sortKeys(next.observed.statuses)) &&
    JSON.stringify(sortKeys(previous.observed_detail?.status_sums ?? {})) === JSON.stringify(sortKeys(detailOf(next.observed).status_sums)) &&
    previous.observed_detail?.base_sum.value === detailOf(next.observed).base_sum.value &&
    JSON.stringify(previous.explanation.unsettled.map((u) => [u.reason, u.count])) === JSON.stringify(next.explanation.unsettled.map((u) => [u.reason, u.count]))
  );
}

const sortKeys = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

function resultView(row: ResultRow, asset: string, scale: number): ReconciliationResult {
  const detail = row.observed_detail;
  return {
    status: row.status,
    computed_at: row.computed_at.toISOString(),
    observed: {
      count: Number(row.observed_count),
      sum: { value: row.observed_sum, asset, scale },
      statuses: row.observed_statuses,
      ...(detail
        ? {
            status_sums: Object.fromEntries(Object.entries(detail.status_sums).map(([s, value]) => [s, { value, asset, scale }])),
            base_sum: detail.base_sum.value === null ? null : { value: detail.base_sum.value, asset: detail.base_sum.asset, scale: detail.base_sum.scale },
          }
        : {}),
    },
    explanation: { ...row.explanation, sum_difference: { value: row.explanation.sum_difference, asset, scale } },
  };
}

function reconciliationView(row: ReconciliationRow, results: ResultRow[], withHistory: boolean): ReconciliationView {
  const latest = results.at(-1)!;
  const statuses = declaredStatusesOf(row);
  const withSums = statuses && Object.entries(statuses).filter(([, f]) => f.sum !== null);
  const filters = {
    ...(row.movement_types ? { types: row.movement_types } : {}),
    ...(row.rails ? { rails: row.rails } : {}),
    ...(row.counterparty ? { counterparty: row.counterparty } : {}),
    ...(row.import_id ? { import_id: `${ID_PREFIXES.import}${row.import_id}` } : {}),
  };
  return {
    reconciliation_id: `${ID_PREFIXES.reconciliation}${row.reconciliation_id}`,
    scope: row.subject_kind === 'tenant' ? { kind: 'tenant' } : { kind: row.subject_kind, external_id: row.subject_id! },
    direction: row.direction,
    asset: row.asset,
    period: { from: row.period_from.toISOString(), to: row.period_to.toISOString(), from_inclusive: row.from_inclusive, to_inclusive: row.to_inclusive },
    declared: {
      count: Number(row.declared_count),
      sum: { value: row.declared_sum, asset: row.asset, scale: row.scale },
      statuses: statuses ? Object.fromEntries(Object.entries(statuses).map(([s, f]) => [s, f.count])) : null,
      status_sums: withSums && withSums.length > 0 ? Object.fromEntries(withSums.map(([s, f]) => [s, { value: f.sum!.toString(), asset: row.asset, scale: row.scale }])) : null,
    },
    counted_statuses: row.counted_statuses,
    basis: row.basis,
    ...(Object.keys(filters).length > 0 ? { filters } : {}),
    tolerance: {
      ...(row.tolerance_minor !== null ? { sum_minor: row.tolerance_minor } : {}),
      ...(row.tolerance_bps !== null ? { sum_bps: row.tolerance_bps } : {}),
      count: Number(row.tolerance_count),
    },
    customer_reference: row.customer_reference,
    corrects: row.corrects ? `${ID_PREFIXES.reconciliation}${row.corrects}` : null,
    created_at: row.created_at.toISOString(),
    status: row.status,
    result: resultView(latest, row.asset, row.scale),
    ...(withHistory ? { history: results.map((r) => resultView(r, row.asset, row.scale)) } : {}),
  };
}
