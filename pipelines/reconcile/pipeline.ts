// pipelines/reconcile: canonical change records in; a reconciliation whose scope can hold a changed
// movement (markStale) is marked stale, and stale ones are compared again on a
// short timer, a bounded number per tick, so a slow comparison never holds the bus back. Marking
// is idempotent, and comparing again appends nothing when nothing changed. The same timer checks
// the expected declarations that have come due (expectations.ts).
import { every } from '../../platform/periodic.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Bus, BusRecord } from '../../platform/bus/port.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { CanonicalChange, MovementChange } from '../../schemas/bus/canonical-change.ts';
import { RECONCILE } from '../groups.ts';
import { sweepExpectations } from '../../services/reconciliations/expectations.ts';
import { Reconciliations } from '../../services/reconciliations/reconciliations.ts';

const RECHECK_EVERY_MS = 2000;
const RECHECKS_PER_TICK = 50;

export async function startReconcilePipeline(options: { bus: Bus; pool: Pool; clock: Clock; onError?: (error: unknown) => void }): Promise<{ stop: () => Promise<void> }> {
  const reconciliations = new Reconciliations(options.pool);
  const handle = async (records: BusRecord[]) => {
    const moved = records.flatMap((record) => {
      const change = JSON.parse(record.value.toString('utf8')) as CanonicalChange;
      return change.object === 'movement' ? [change] : [];
    });
    if (moved.length > 0) await markStale(options.pool, await withOriginals(options.pool, moved.map(touchOf)));
  };
  const consumer = await options.bus.consume({ ...RECONCILE, handle });
  const ticking = every(
    RECHECK_EVERY_MS,
    async () => {
      await recheckStale(reconciliations, options.clock, RECHECKS_PER_TICK, options.onError);
      await sweepExpectations(options.pool, options.clock.now(), RECHECKS_PER_TICK, options.onError);
    },
    options.onError,
  );
  return {
    stop: async () => {
      await ticking.stop();
      await consumer.stop();
    },
  };
}

// What a movement can change: the declarations of its tenant and asset whose period (on either
// basis) holds it and whose scope names one of its legs, or the tenant.
export interface Touch {
  tenant: string;
  // The movement's own id, when the touch is a movement's own (not one of its links').
  id?: string;
  asset: string;
  at: string;
  receivedAt?: string;
  accounts?: Array<string | null>;
  parties?: Array<string | null>;
  type?: string;
  rail?: string | null;
  // The movements it corrects or reverses (their declarations change too).
  originals?: string[];
}

export function touchOf(change: MovementChange): Touch {
  const links = (change.data?.links ?? {}) as { correction_of?: string; reverses?: string };
  return {
    tenant: change.tenant_id,
    id: change.external_id,
    asset: change.amount.asset,
    at: change.occurred_at,
    receivedAt: change.received_at,
    accounts: [change.debit.account_id, change.credit.account_id],
    parties: [change.debit.party_id, change.credit.party_id],
    type: change.type,
    rail: typeof change.data?.rail === 'string' ? change.data.rail : null,
    originals: [links.correction_of, links.reverses].filter((id): id is string => typeof id === 'string'),
  };
}

// A correction or a reversal also touches its original's declarations: the original's own time,
// legs and asset (it leaves or nets there, whatever the correction's asset), and its legs at the
// new movement's time (a reversal is attributed to what it reverses). An original that arrives
// after a reversal of it touches the reversal's time with both legs: the reversal counted on its
// own legs until then, and from now on on the original's. One indexed read each for the batch.
export async function withOriginals(pool: Pool, touches: Touch[]): Promise<Touch[]> {
  return [...touches, ...(await originalsOf(pool, touches)), ...(await reversersOf(pool, touches))];
}

interface LinkedRow {
  tenant_id: string;
  external_id: string;
  amount_asset: string;
  occurred_at: Date;
  received_at: Date;
  type: string;
  rail: string | null;
  accounts: Array<string | null>;
  parties: Array<string | null>;
}

const LINKED_COLUMNS = `m.tenant_id, m.external_id, m.amount_asset, m.occurred_at, m.received_at, m.type, m.data->>'rail' AS rail,
            ARRAY[m.debit_account_id, m.credit_account_id] AS accounts, ARRAY[m.debit_party_id, m.credit_party_id] AS parties`;

async function originalsOf(pool: Pool, touches: Touch[]): Promise<Touch[]> {
  const wanted = touches.flatMap((t) => (t.originals ?? []).map((id) => ({ tenant: t.tenant, id, touch: t })));
  if (wanted.length === 0) return [];
  const { rows } = await pool.query<LinkedRow>(
    `SELECT ${LINKED_COLUMNS}
       FROM canonical_movements m JOIN unnest($1::text[], $2::text[]) AS u(tenant_id, external_id)
         ON m.tenant_id = u.tenant_id AND m.external_id = u.external_id`,
    [wanted.map((w) => w.tenant), wanted.map((w) => w.id)],
  );
  return wanted.flatMap(({ tenant, id, touch }) => {
    const original = rows.find((r) => r.tenant_id === tenant && r.external_id === id);
    if (!original) return [];
    const legs = { tenant, accounts: original.accounts, parties: original.parties };
    return [
      { ...legs, type: original.type, rail: original.rail, asset: original.amount_asset, at: original.occurred_at.toISOString(), receivedAt: original.received_at.toISOString() },
      // The new movement's own entry, on the original's legs: filtered by its own type and rail.
      { ...legs, type: touch.type, rail: touch.rail, asset: touch.asset, at: touch.at, receivedAt: touch.receivedAt ?? touch.at },
    ];
  });
}

async function reversersOf(pool: Pool, touches: Touch[]): Promise<Touch[]> {
  const arrived = touches.filter((t): t is Touch & { id: string } => t.id !== undefined);
  if (arrived.length === 0) return [];
  const { rows } = await pool.query<LinkedRow & { reverses: string }>(
    `SELECT l.to_id AS reverses, ${LINKED_COLUMNS}
       FROM unnest($1::text[], $2::text[]) AS u(tenant_id, external_id)
       JOIN canonical_movement_links l ON l.tenant_id = u.tenant_id AND l.to_id = u.external_id AND l.relation = 'reverses'
       JOIN canonical_movements m ON m.tenant_id = l.tenant_id AND m.external_id = l.from_id`,
    [arrived.map((t) => t.tenant), arrived.map((t) => t.id)],
  );
  return rows.flatMap((reverser) => {
    const original = arrived.find((t) => t.tenant === reverser.tenant_id && t.id === reverser.reverses)!;
    const entry = { tenant: reverser.tenant_id, asset: reverser.amount_asset, at: reverser.occurred_at.toISOString(), receivedAt: reverser.received_at.toISOString(), type: reverser.type, rail: reverser.rail };
    return [
      { ...entry, accounts: reverser.accounts, parties: reverser.parties },
      { ...entry, accounts: original.accounts, parties: original.parties },
    ];
  });
}

// Marks the reconciliations (not corrected since) that a movement can change. Conservative: both
// period bounds inclusive, either leg, direction and the counterparty and import filters not
// applied (a needless comparison appends nothing); only the tenant, asset, period, subject,
// movement type and rail narrow. Leg, type and rail left out of a touch match every declaration.
// One already stale is left alone, unless a recheck has claimed it: its comparison may have
// begun before this movement committed, and clears the mark when it commits, so the mark is
// written again after it (recheckNextStale).
export async function markStale(pool: Pool, touches: Touch[]): Promise<void> {
  const list = (values: Array<string | null> | undefined) => (values ? `{${values.map((v) => (v === null ? 'NULL' : JSON.stringify(v))).join(',')}}` : null);
  await pool.query(
    `UPDATE reconciliations r SET stale = true
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
              AS u(tenant_id, asset, at, received_at, accounts, parties, type, rail, has_rail)
      WHERE r.tenant_id = u.tenant_id AND r.asset = u.asset AND (NOT r.stale OR r.checking_until IS NOT NULL)
        AND r.period_from <= greatest(u.at, u.received_at)
        AND ((r.basis = 'occurred' AND u.at BETWEEN r.period_from AND r.period_to)
             OR (r.basis = 'recorded' AND u.received_at BETWEEN r.period_from AND r.period_to))
        AND (r.subject_kind = 'tenant'
             OR (r.subject_kind = 'account' AND (u.accounts IS NULL OR r.subject_id = ANY (u.accounts::text[])))
             OR (r.subject_kind = 'party' AND (u.parties IS NULL OR r.subject_id = ANY (u.parties::text[]))))
        AND (r.movement_types IS NULL OR u.type IS NULL OR u.type = ANY (r.movement_types))
        AND (r.rails IS NULL OR u.has_rail IS NULL OR u.rail = ANY (r.rails))
        AND NOT EXISTS (SELECT 1 FROM reconciliations c WHERE c.corrects = r.reconciliation_id)`,
    [
      touches.map((t) => t.tenant),
      touches.map((t) => t.asset),
      touches.map((t) => t.at),
      touches.map((t) => t.receivedAt ?? t.at),
      touches.map((t) => list(t.accounts)),
      touches.map((t) => list(t.parties)),
      touches.map((t) => t.type ?? null),
      touches.map((t) => t.rail ?? null),
      touches.map((t) => (t.rail === undefined ? null : 'known')),
    ],
  );
}

// Compares stale reconciliations again, one transaction each, at most `max` attempts. Returns
// how many were compared; one that fails is reported and the others go on.
export async function recheckStale(reconciliations: Reconciliations, clock: Clock, max: number, onError?: (error: unknown) => void): Promise<number> {
  let done = 0;
  for (let attempt = 0; attempt < max; attempt++) {
    try {
      if (!(await reconciliations.recheckNextStale(clock.now()))) break;
      done += 1;
    } catch (error) {
      onError?.(error);
    }
  }
  return done;
}
