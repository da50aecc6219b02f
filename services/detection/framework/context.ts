// Everything a detector may read about one subject at one instant of event time. Every read is
// memoised for the evaluation: a dozen detectors asking for the same windows, baseline or fan-in
// cost one store call. Reads are bounded in event time (nothing after `at` is ever seen), which
// is what lets a backtest replay history through the same detectors.
import { WINDOWS, type ActivityQuery, type ActivityRecord, type AggregateStore, type Baseline, type CounterpartyHistory, type WindowName, type WindowOptions, type WindowStats } from '../../../platform/aggregates/port.ts';
import type { FlowSet, GatherScatter, GraphStore, ScatterGather, SharedAttribute, CycleOptions, Cycle, TwoHopOptions } from '../../../platform/graph/port.ts';
import type { Pool } from '../../../platform/postgres/pool.ts';
import type { MovementChange, ControlEventChange } from '../../../schemas/bus/canonical-change.ts';
import type { SubjectRef } from './detector.ts';
import type { AccountMovement, SnapshotReader } from '../../../platform/aggregates/snapshot.ts';
import { memoKey } from './memo-key.ts';
import { gatherScatterOf } from '../../../platform/graph/shared/flows.ts';
import { flowSetOf } from './snapshot-flows.ts';
import type { EntityLoader } from './entity-loader.ts';
import type { FlaggedPartiesLoader } from './flagged-loader.ts';
import type { GraphLoader } from './graph-loader.ts';
import { readMovementTypes, type MovementTypesLoader } from './movement-types.ts';

export interface DetectionStores {
  pool: Pool;
  graph: GraphStore;
  aggregates: AggregateStore;
}

export interface EntityVersion {
  externalId: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}

export interface ControlEventFact {
  externalId: string;
  occurredAt: Date;
  type: string;
  subject: { kind: string; externalId: string };
  data: Record<string, unknown>;
}

// What triggered the evaluation, when it was a change record.
export type TriggerChange = MovementChange | ControlEventChange;

// What was loaded for a whole batch of subjects at once (prefetch.ts), read before the stores.
export interface Prefetched {
  // The subject's recent activity; reads it cannot answer exactly go to the aggregate store.
  snapshot?: SnapshotReader;
  // Canonical entities keyed by entityKey(); null when known to be absent.
  entities?: ReadonlyMap<string, EntityVersion | null>;
  // The accounts of the subject's party up to the evaluation instant (accountsOfParty).
  accountsOfParty?: readonly string[];
  // Reads the other entities asked for, those of the batch's evaluations together.
  entityLoader?: EntityLoader;
  // Answers flaggedParties, the batch's asks together.
  flaggedLoader?: FlaggedPartiesLoader;
  // Answers cycles, scatterGather and sharedAttributes, the batch's asks together.
  graphLoader?: GraphLoader;
  // Answers movementTypes, the batch's asks together.
  movementTypesLoader?: MovementTypesLoader;
}

export type { AccountMovement } from '../../../platform/aggregates/snapshot.ts';

// Accounts listed per party: a party with more is a business whose own-account transfers are
// judged on these.
export const HOLDINGS_LIMIT = 200;

export const entityKey = (object: string, externalId: string): string => `${object}\u0000${externalId}`;

// The read of one window with no other option, its memo key (the key windows() gives it), and the
// memo key of that window's own statistics. Shared by every evaluation, so frozen: a reader that
// changed it would fail, not mislead others.
const ONE_WINDOW = Object.fromEntries(
  (Object.keys(WINDOWS) as WindowName[]).map((name) => {
    const options: WindowOptions = Object.freeze({ windows: Object.freeze([name]) as WindowName[] });
    return [name, { options, key: `windows:${memoKey(options)}`, statsKey: `window:${name}` }];
  }),
) as Record<WindowName, { options: WindowOptions; key: string; statsKey: string }>;

const firstStats = (stats: WindowStats[]): WindowStats => stats[0]!;

export class SubjectContext {
  private readonly memo = new Map<string, Promise<unknown>>();
  private readonly accountFlows = new Map<string, Map<string, { sum: bigint; firstAt: Date; lastAt: Date }> | null>();
  private readonly accountMovements = new Map<string, AccountMovement[] | null>();

  constructor(
    // Public for detectors that read what no memoised read covers (a learned model, its loader).
    readonly stores: DetectionStores,
    readonly tenantId: string,
    readonly baseAsset: string,
    readonly subject: SubjectRef,
    // Event time of the evaluation: windows end here, inclusive.
    readonly at: Date,
    readonly trigger: TriggerChange | null = null,
    private readonly prefetched: Prefetched = {},
  ) {}

  // Keys name instants by their epoch milliseconds: as exact as toISOString, and cheaper for reads
  // made by every detector of every evaluation. Public for what several detectors derive alike
  // from these reads (dealings.ts), under keys of their own: the context's keys never start
  // with "derived:".
  once<T>(key: string, load: () => Promise<T>): Promise<T> {
    let found = this.memo.get(key) as Promise<T> | undefined;
    if (!found) {
      found = load();
      this.memo.set(key, found);
    }
    return found;
  }

  private get aggregateSubject() {
    return { tenantId: this.tenantId, kind: this.subject.kind, id: this.subject.id };
  }

  // ---- behaviour (the aggregate store) ----

  windows(options: WindowOptions = {}): Promise<WindowStats[]> {
    return this.windowsRead({ options, key: `windows:${memoKey(options)}` });
  }

  private windowsRead({ options, key }: { options: WindowOptions; key: string }): Promise<WindowStats[]> {
    return this.once(key, async () => this.prefetched.snapshot?.windows(this.at, options) ?? this.stores.aggregates.windows(this.aggregateSubject, this.at, options));
  }

  window(name: WindowName, options?: Omit<WindowOptions, 'windows'>): Promise<WindowStats> {
    if (options) return this.windows({ ...options, windows: [name] }).then(firstStats);
    // Most reads name one window and nothing else, and several detectors of an evaluation read the
    // same one: its options and keys are made once, and every read after the first is answered
    // with the promise the first made (an async function would make a promise, and a destructuring
    // an iterator, on every read).
    const one = ONE_WINDOW[name];
    return this.once(one.statsKey, () => this.windowsRead(one).then(firstStats));
  }

  // How many distinct accounts another account was paid by ('in') or paid ('out') in [since, at],
  // counted no further than atMost + 1: enough to tell a business that takes everyone's payments
  // from one person. A read that stops at the bound: the accounts asked about are hubs, and
  // adding up a hub's flows for every customer who paid it twice made detection crawl. null when
  // the network could not answer in time.
  accountReach(account: string, direction: 'in' | 'out', since: Date, atMost: number): Promise<number | null> {
    return this.once(`reach:${account}:${direction}:${since.getTime()}:${atMost}`, async () => {
      const ask = { account, direction, since, until: this.at, atMost };
      return this.prefetched.graphLoader ? this.prefetched.graphLoader.counterpartyCount(ask) : (await this.stores.graph.counterpartyCounts(this.tenantId, [ask]))[0]!;
    });
  }

  baseline(days = 90): Promise<Baseline> {
    return this.baselineBefore(this.at, days);
  }

  // The baseline of the whole days before the day of `before` (no later than the evaluation's
  // instant): what was normal before a window began, without the window's own days.
  baselineBefore(before: Date, days = 90): Promise<Baseline> {
    const at = before.getTime() < this.at.getTime() ? before : this.at;
    return this.once(`baseline:${days}:${at.getTime()}`, async () => this.prefetched.snapshot?.baseline(at, days) ?? this.stores.aggregates.baseline(this.aggregateSubject, at, days));
  }

  lastActivityBefore(before: Date): Promise<Date | null> {
    return this.once(`last:${before.getTime()}`, async () => {
      const known = this.prefetched.snapshot?.lastActivity(before);
      return known !== undefined ? known : this.stores.aggregates.lastActivity(this.aggregateSubject, before);
    });
  }

  counterpartyHistory(counterparty: string, at: Date = this.at): Promise<CounterpartyHistory | null> {
    return this.once(`cp:${counterparty}:${at.getTime()}`, async () =>
      this.prefetched.snapshot?.noHistoryWith(counterparty, at) ? null : this.stores.aggregates.counterparty(this.aggregateSubject, counterparty, at),
    );
  }

  // The subject's activities in (from, at], latest first.
  activities(from: Date, query: ActivityQuery = {}): Promise<ActivityRecord[]> {
    return this.once(
      `acts:${from.getTime()}:${memoKey(query)}`,
      async () => this.prefetched.snapshot?.activities(from, this.at, query) ?? this.stores.aggregates.activities(this.aggregateSubject, from, this.at, query),
    );
  }

  // The types of these movements (by external id), from the canonical model: the activity
  // record does not carry them. Types never change, so nothing after `at` can leak through.
  movementTypes(ids: readonly string[]): Promise<Map<string, string>> {
    return this.once(`mtypes:${ids.join('\u0000')}`, () => this.prefetched.movementTypesLoader?.types(ids) ?? readMovementTypes(this.stores.pool, this.tenantId, ids));
  }

  // The subject's movements with other accounts in one direction in (from, at], latest first,
  // from the snapshot alone; null when it cannot tell. The same movements as the network's
  // transfers for that span (both list completed and pending movements between two accounts, at
  // their base value), so a detector can rule a pattern out without a network read.
  snapshotAccountMovements(direction: 'in' | 'out', from: Date): readonly AccountMovement[] | null {
    const key = `${direction}:${from.getTime()}`;
    if (!this.accountMovements.has(key)) this.accountMovements.set(key, this.readAccountMovements(direction, from));
    return this.accountMovements.get(key)!;
  }

  private readAccountMovements(direction: 'in' | 'out', from: Date): AccountMovement[] | null {
    return this.prefetched.snapshot?.accountMovements(direction, from, this.at) ?? null;
  }

  // The same movements per account: the sum and first and last instants of each.
  snapshotAccountFlows(direction: 'in' | 'out', from: Date): Map<string, { sum: bigint; firstAt: Date; lastAt: Date }> | null {
    const key = `${direction}:${from.getTime()}`;
    if (!this.accountFlows.has(key)) this.accountFlows.set(key, this.readAccountFlows(direction, from));
    return this.accountFlows.get(key)!;
  }

  private readAccountFlows(direction: 'in' | 'out', from: Date): Map<string, { sum: bigint; firstAt: Date; lastAt: Date }> | null {
    const movements = this.snapshotAccountMovements(direction, from);
    if (!movements) return null;
    const flows = new Map<string, { sum: bigint; firstAt: Date; lastAt: Date }>();
    // Latest first: the first movement seen of an account is its last.
    for (const movement of movements) {
      const flow = flows.get(movement.account);
      if (flow) {
        flow.sum += movement.value ?? 0n;
        flow.firstAt = movement.occurredAt;
      } else flows.set(movement.account, { sum: movement.value ?? 0n, firstAt: movement.occurredAt, lastAt: movement.occurredAt });
    }
    return flows;
  }

  // At most how many distinct accounts the subject dealt with in one direction in (from, at]
  // (Infinity when the snapshot cannot tell): a detector needing more need not read the network.
  counterpartyAccountsAtMost(direction: 'in' | 'out', from: Date): number {
    return this.snapshotAccountFlows(direction, from)?.size ?? Infinity;
  }

  // ---- the network (the graph store); account subjects only for flows ----

  // Fan-in, fan-out and gather-scatter come from the snapshot when it holds the window
  // (snapshot-flows.ts), else from the network.
  fanIn(since: Date, limit = 100): Promise<FlowSet> {
    return this.once(`fanin:${since.getTime()}:${limit}`, async () => this.snapshotFlows('in', since, limit) ?? this.stores.graph.fanIn(this.tenantId, this.subject.id, { since, until: this.at, limit }));
  }

  fanOut(since: Date, limit = 100): Promise<FlowSet> {
    return this.once(`fanout:${since.getTime()}:${limit}`, async () => this.snapshotFlows('out', since, limit) ?? this.stores.graph.fanOut(this.tenantId, this.subject.id, { since, until: this.at, limit }));
  }

  // The flows in [since, at] from the snapshot, as the network would answer them; undefined when
  // the snapshot cannot tell.
  private snapshotFlows(direction: 'in' | 'out', since: Date, limit: number): FlowSet | undefined {
    // (since - 1 ms, at] is [since, at]: the stores keep instants in whole milliseconds.
    const movements = this.snapshotAccountMovements(direction, new Date(since.getTime() - 1));
    return movements ? flowSetOf(this.subject.id, movements, limit) : undefined;
  }

  // The search's first hops (the account's own payments out) come from the snapshot when it holds
  // the window: one network statement fewer per search, and a search left with one statement
  // needs no transaction either.
  cycles(options: Omit<CycleOptions, 'until' | 'firstHops'>): Promise<{ cycles: Cycle[]; truncated: boolean }> {
    return this.once(`cycles:${memoKey(options)}`, () => {
      const outs = this.snapshotAccountMovements('out', new Date(options.since.getTime() - 1));
      const firstHops = outs?.map((m) => ({ movementId: m.movementId, from: this.subject.id, to: m.account, occurredAt: m.occurredAt, amount: m.value }));
      const search: CycleOptions = { ...options, until: this.at, ...(firstHops ? { firstHops } : {}) };
      return this.prefetched.graphLoader?.cycles(this.subject.id, search) ?? this.stores.graph.cycles(this.tenantId, this.subject.id, search);
    });
  }

  scatterGather(options: Omit<TwoHopOptions, 'until'>): Promise<ScatterGather> {
    return this.once(`sg:${memoKey(options)}`, () => {
      const search: TwoHopOptions = { ...options, until: this.at };
      return this.prefetched.graphLoader?.scatterGather(this.subject.id, search) ?? this.stores.graph.scatterGather(this.tenantId, this.subject.id, search);
    });
  }

  gatherScatter(since: Date, limit = 100): Promise<GatherScatter> {
    return this.once(`gs:${since.getTime()}:${limit}`, async () => {
      const [inflow, outflow] = [this.snapshotFlows('in', since, limit), this.snapshotFlows('out', since, limit)];
      if (!inflow || !outflow) return this.stores.graph.gatherScatter(this.tenantId, this.subject.id, { since, until: this.at, limit });
      return gatherScatterOf(this.subject.id, inflow, outflow);
    });
  }

  // Parties sharing an identifier, device or ip with the subject's party.
  async sharedAttributes(limit = 50): Promise<{ shared: SharedAttribute[]; truncated: boolean }> {
    const party = await this.partyId();
    if (!party) return { shared: [], truncated: false };
    return this.once(`shared:${party}:${limit}`, () => this.prefetched.graphLoader?.sharedAttributes(party, limit, this.at) ?? this.stores.graph.sharedAttributes(this.tenantId, party, { limit, until: this.at }));
  }

  // ---- the canonical model ----

  // The subject's party: itself, or the holder of the subject account.
  async partyId(): Promise<string | null> {
    if (this.subject.kind === 'party') return this.subject.id;
    const account = await this.account();
    const holder = account?.data.holder_party_id;
    return typeof holder === 'string' ? holder : null;
  }

  // The current version of the subject's party (the holder, for an account).
  party(): Promise<EntityVersion | null> {
    return this.once('party', async () => {
      const id = await this.partyId();
      return id ? this.entity('party', id) : null;
    });
  }

  // The current version of the subject account; null for a party subject.
  account(): Promise<EntityVersion | null> {
    if (this.subject.kind !== 'account') return Promise.resolve(null);
    return this.once('account', () => this.entity('account', this.subject.id));
  }

  entity(object: 'party' | 'account' | 'instrument', externalId: string): Promise<EntityVersion | null> {
    return this.once(`entity:${object}:${externalId}`, async () => {
      const known = this.prefetched.entities?.get(entityKey(object, externalId));
      if (known !== undefined) return known;
      if (this.prefetched.entityLoader) return this.prefetched.entityLoader.get(object, externalId);
      const { rows } = await this.stores.pool.query<{ external_id: string; occurred_at: Date; data: Record<string, unknown> }>({
        name: 'detect-entity',
        text: 'SELECT external_id, occurred_at, data FROM canonical_entities WHERE tenant_id = $1 AND object = $2 AND external_id = $3',
        values: [this.tenantId, object, externalId],
      });
      const row = rows[0];
      return row ? { externalId: row.external_id, occurredAt: row.occurred_at, data: row.data } : null;
    });
  }

  // The accounts the subject's party holds or held up to `at` (the party's own account for an
  // account subject too), at most HOLDINGS_LIMIT.
  accountsOfParty(): Promise<string[]> {
    return this.once('party-accounts', async () => {
      if (this.prefetched.accountsOfParty) return [...this.prefetched.accountsOfParty];
      const party = await this.partyId();
      if (!party) return [];
      const [held] = await this.stores.graph.holdings(this.tenantId, [{ party, until: this.at }], HOLDINGS_LIMIT);
      return held ?? [];
    });
  }

  // Control events about the subject's party or any of its accounts in (since, at], oldest first
  // (the latest 500 when there are more).
  controlEvents(since: Date, types?: readonly string[]): Promise<ControlEventFact[]> {
    return this.once(`ce:${since.getTime()}:${types?.join(',') ?? '*'}`, async () => {
      const party = await this.partyId();
      const accounts = await this.accountsOfParty();
      const subjects = [...(party ? [`party:${party}`] : []), ...accounts.map((a) => `account:${a}`)];
      if (this.subject.kind === 'account' && !accounts.includes(this.subject.id)) subjects.push(`account:${this.subject.id}`);
      if (subjects.length === 0) return [];
      const { rows } = await this.stores.pool.query<{ external_id: string; occurred_at: Date; type: string; subject_kind: string; subject_external_id: string; data: Record<string, unknown> }>({
        name: 'detect-control-events',
        text: `SELECT c.external_id, c.occurred_at, c.type, c.subject_kind, c.subject_external_id, c.data
                 FROM unnest($2::text[]) s(ref)
                 JOIN canonical_control_events c
                   ON c.tenant_id = $1 AND c.subject_kind = split_part(s.ref, ':', 1)
                  AND c.subject_external_id = substr(s.ref, length(split_part(s.ref, ':', 1)) + 2)
                  AND c.occurred_at > $3 AND c.occurred_at <= $4
                WHERE $5::text[] IS NULL OR c.type = ANY($5::text[])
                ORDER BY c.occurred_at DESC, c.external_id DESC
                LIMIT 500`,
        values: [this.tenantId, subjects, since, this.at, types ?? null],
      });
      // The latest 500, returned oldest first.
      return rows.reverse().map((r) => ({
        externalId: r.external_id,
        occurredAt: r.occurred_at,
        type: r.type,
        subject: { kind: r.subject_kind, externalId: r.subject_external_id },
        data: r.data,
      }));
    });
  }

  // Of these parties, those with an open live alert (of any detector) raised at or before `at`.
  flaggedParties(parties: readonly string[]): Promise<string[]> {
    if (parties.length === 0) return Promise.resolve([]);
    return this.once(`flagged:${[...parties].sort().join(',')}`, async () => {
      if (this.prefetched.flaggedLoader) return this.prefetched.flaggedLoader.flagged(parties, this.at);
      const { rows } = await this.stores.pool.query<{ party_id: string }>({
        name: 'detect-flagged-parties',
        text: `SELECT DISTINCT party_id FROM alerts
                WHERE tenant_id = $1 AND mode = 'live' AND status = 'open' AND party_id = ANY($2::text[]) AND window_from <= $3`,
        values: [this.tenantId, parties, this.at],
      });
      return rows.map((r) => r.party_id);
    });
  }
}
