// A declaration as the service holds it, from a request: the body checked against the schema and
// its rules that span fields (per-status figures add up to the totals, money in the declared
// asset and its registry scale, one threshold kind), and the hash that tells a repeat from a
// different declaration under the same customer reference.
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { canonicalJson } from '../../platform/json/canonical-json.ts';
import { parseId } from '../../platform/ids.ts';
import type { AssetRegistry } from '../../schemas/assets/registry.ts';
import type { ErrorCode } from '../../schemas/errors/catalog.ts';
import { checkMoneyScale, type Money } from '../../schemas/primitives/money.ts';
import { dateTimeMs } from '../../schemas/primitives/timestamp.ts';
import type { FieldError } from '../../schemas/problem.ts';
import { reconciliationRequestSchema } from '../../schemas/reconciliations.ts';
import { requestSchemaErrors } from '../../schemas/validation/request-errors.ts';
import type { Definition } from './ledger.ts';
import type { Tolerance } from './tolerance.ts';

export type DeclaredStatuses = Record<string, { count: number; sum: bigint | null }>;

export interface Declaration {
  definition: Omit<Definition, 'tenantId'>;
  scale: number;
  count: number;
  sum: bigint;
  // Null when the declaration named no status (completed only is counted).
  statuses: DeclaredStatuses | null;
  tolerance: Tolerance;
  customerReference: string | null;
  corrects: string | null;
  hash: Buffer;
}

export type DeclarationOutcome = { ok: true; declaration: Declaration } | { ok: false; code: ErrorCode; errors: FieldError[] };

// A declaration is compared again whenever a movement of its period changes, each time over the
// whole period, and its items are read from the whole period: one of years would rescan millions of
// movements per change. A year, leap day included, covers every period a control total is declared
// for (a day, a month, a quarter, a year).
const MAX_PERIOD_DAYS = 366;
const DAY_MS = 86_400_000;

export function parseDeclaration(body: unknown, registry: AssetRegistry): DeclarationOutcome {
  const parsed = reconciliationRequestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, code: 'svc:validation/schema', errors: requestSchemaErrors(parsed.error) };
  const request = parsed.data;
  const errors: FieldError[] = [];
  const schemaError = (path: string, message: string) => errors.push({ path, code: 'svc:validation/schema', message });
  if (request.scope.kind === 'tenant' && request.direction !== 'both') schemaError('direction', 'a tenant scope counts every movement once: use both');
  const periodMs = dateTimeMs(request.period.to) - dateTimeMs(request.period.from);
  if (periodMs < 0) schemaError('period.to', 'must not be before period.from');
  // One instant with a bound left out holds nothing: compared with zero forever, it would open a
  // break (and announce coverage.degraded) that no movement could ever close.
  else if (periodMs === 0 && !(request.period.from_inclusive && request.period.to_inclusive))
    schemaError('period.to', 'must be after period.from, or equal to it with both bounds inclusive: this period holds no instant');
  else if (periodMs > MAX_PERIOD_DAYS * DAY_MS) schemaError('period.to', `must be at most ${MAX_PERIOD_DAYS} days after period.from`);
  if (request.declared.sum.asset !== request.asset) schemaError('declared.sum.asset', 'must be the reconciliation\'s asset');
  const corrects = request.corrects === undefined ? null : (parseId('reconciliation', request.corrects) ?? false);
  if (corrects === false) schemaError('corrects', 'must be an rcn_ id');
  const importId = request.filters?.import_id === undefined ? null : (parseId('import', request.filters.import_id) ?? false);
  if (importId === false) schemaError('filters.import_id', 'must be an imp_ id');
  if (request.tolerance?.sum_minor !== undefined && request.tolerance.sum_bps !== undefined) schemaError('tolerance', 'give sum_minor or sum_bps, not both');

  const money: Array<[string, Money]> = [['declared.sum', request.declared.sum]];
  let statuses: DeclaredStatuses | null = null;
  if (request.declared.statuses) {
    statuses = {};
    for (const [status, figure] of Object.entries(request.declared.statuses)) {
      if (figure === undefined) continue;
      if (typeof figure === 'number') {
        statuses[status] = { count: figure, sum: null };
        continue;
      }
      if (figure.sum.asset !== request.asset) schemaError(`declared.statuses.${status}.sum.asset`, 'must be the reconciliation\'s asset');
      money.push([`declared.statuses.${status}.sum`, figure.sum]);
      statuses[status] = { count: figure.count, sum: BigInt(figure.sum.value) };
    }
    const figures = Object.values(statuses);
    if (figures.length === 0) schemaError('declared.statuses', 'must name at least one status, or be left out (completed only)');
    if (figures.reduce((n, f) => n + f.count, 0) !== request.declared.count) schemaError('declared.count', 'must be the sum of the counts per status');
    if (figures.length > 0 && figures.every((f) => f.sum !== null) && figures.reduce((n, f) => n + f.sum!, 0n) !== BigInt(request.declared.sum.value)) {
      schemaError('declared.sum.value', 'must be the sum of the sums per status');
    }
  }
  if (errors.length > 0) return { ok: false, code: 'svc:validation/schema', errors };
  for (const [path, amount] of money) {
    const scale = checkMoneyScale(amount, registry);
    if (scale) return { ok: false, code: 'svc:validation/money_scale_mismatch', errors: [{ path: `${path}.${scale.field}`, code: 'svc:validation/money_scale_mismatch', message: scale.message }] };
  }

  return {
    ok: true,
    declaration: {
      definition: {
        subjectKind: request.scope.kind,
        subjectId: request.scope.kind === 'tenant' ? null : request.scope.external_id,
        direction: request.direction,
        asset: request.asset,
        from: new Date(dateTimeMs(request.period.from)),
        fromInclusive: request.period.from_inclusive,
        to: new Date(dateTimeMs(request.period.to)),
        toInclusive: request.period.to_inclusive,
        basis: request.basis,
        countedStatuses: statuses ? Object.keys(statuses).sort() : ['completed'],
        types: request.filters?.types ? [...new Set(request.filters.types)].sort() : null,
        rails: request.filters?.rails ? [...new Set(request.filters.rails)].sort() : null,
        counterparty: request.filters?.counterparty ?? null,
        importId: importId || null,
      },
      scale: request.declared.sum.scale,
      count: request.declared.count,
      sum: BigInt(request.declared.sum.value),
      statuses,
      tolerance: {
        sumMinor: request.tolerance?.sum_minor === undefined ? null : BigInt(request.tolerance.sum_minor),
        sumBps: request.tolerance?.sum_bps ?? null,
        count: request.tolerance?.count ?? 0,
      },
      customerReference: request.customer_reference ?? null,
      corrects: corrects || null,
      hash: contentHash(request, { corrects: corrects || null, importId: importId || null }),
    },
  };
}

// The request as parsed, normalised so that the same content hashes the same (a retry by
// customer_reference must find it): defaults applied, instants in one form, ids parsed, the
// filters' sets sorted, and members in canonical JSON's order whatever the client's.
function contentHash(request: z.output<typeof reconciliationRequestSchema>, ids: { corrects: string | null; importId: string | null }): Buffer {
  const sorted = (items: readonly string[]) => [...new Set(items)].sort();
  const filters = request.filters && {
    ...request.filters,
    ...(request.filters.types ? { types: sorted(request.filters.types) } : {}),
    ...(request.filters.rails ? { rails: sorted(request.filters.rails) } : {}),
    ...(ids.importId ? { import_id: ids.importId } : {}),
  };
  const content = {
    ...request,
    period: { ...request.period, from: new Date(dateTimeMs(request.period.from)).toISOString(), to: new Date(dateTimeMs(request.period.to)).toISOString() },
    ...(filters ? { filters } : {}),
    ...(ids.corrects ? { corrects: ids.corrects } : {}),
  };
  return createHash('sha256').update(canonicalJson(content)).digest();
}
