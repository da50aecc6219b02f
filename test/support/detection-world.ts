// A world for detector tests: the API, the canonical, graph and aggregates pipelines on a database
// of their own, builders for hand-made cases, and one call that evaluates one detector on one
// subject at one instant through the framework (data needs checked, parameters parsed).
import { PostgresAggregateStore } from '../../platform/aggregates/postgres.ts';
import type { AggregateStore } from '../../platform/aggregates/port.ts';
import { PostgresLogBus } from '../../platform/bus/postgres-log.ts';
import { PostgresGraphStore } from '../../platform/graph/postgres/store.ts';
import { startAggregatesPipeline, type AggregatesPipeline } from '../../pipelines/aggregates/pipeline.ts';
import { prefetch } from '../../services/detection/framework/prefetch.ts';
import { SubjectContext, type DetectionStores } from '../../services/detection/framework/context.ts';
import type { AnyDetector, DetectorOutcome, SubjectRef, TriggerKind } from '../../services/detection/framework/detector.ts';
import { evaluateSubject } from '../../services/detection/framework/evaluate.ts';
import { compileRuleset } from '../../services/detection/framework/ruleset.ts';
import { startDetectPipeline, type DetectPipeline, type DetectPipelineOptions } from '../../pipelines/detect/pipeline.ts';
import { startGraphPipeline, type GraphPipeline } from '../../pipelines/graph/pipeline.ts';
import { AGGREGATES, CANONICAL, DETECT, GRAPH, type ConsumerGroupSpec } from '../../pipelines/groups.ts';
import { accountEvent, controlEventEvent, movementEvent, partyEvent } from '../fixtures/events.ts';
import { movementMapping } from '../fixtures/import-mappings.ts';
import { startTestApi, type TestApi } from './test-api.ts';
import { ImportWorker } from '../../pipelines/imports/worker.ts';
import { TenantAssetRegistry } from '../../platform/assets/tenant-registry.ts';
import { importViewSchema } from '../../schemas/imports/reports.ts';
import { drain, startTestPipeline, type TestPipeline } from './test-pipeline.ts';

export interface MovementSpec {
  id: string;
  // [account, party]; either may be null (an external side).
  from: [string | null, string | null];
  to: [string | null, string | null];
  // Minor units of USD (scale 2) unless asset/scale say otherwise.
  value: string | number;
  at: string | Date;
  type?: string;
  status?: string;
  cash?: boolean;
  asset?: string;
  scale?: number;
  // Counterparty countries of each side.
  fromCountry?: string;
  toCountry?: string;
  extra?: Record<string, unknown>;
}

export interface DetectionWorld {
  api: TestApi;
  stores: DetectionStores;
  party(id: string, data?: Record<string, unknown>, at?: string | Date): Promise<void>;
  account(id: string, holder: string, data?: Record<string, unknown>, at?: string | Date): Promise<void>;
  movement(spec: MovementSpec): Promise<void>;
  movements(specs: MovementSpec[]): Promise<void>;
  // Each movement sent and settled before the next. Sent together, movements of different payers
  // cross the log's partitions, and an evaluation of their payee sees those that have reached the
  // stores by then: what an alert cites would depend on the order in which they arrived.
  movementsInTurn(specs: MovementSpec[]): Promise<void>;
  // Lands movements through the public historical import (POST /v1/imports, one JSONL chunk, the
  // import worker) before the go-live watermark; amounts in the asset's registered scale, and no
  // cash flag, counterparty countries or extra data (refused).
  importMovements(specs: MovementSpec[], goLiveAt: string): Promise<void>;
  controlEvent(id: string, type: string, subject: { kind: 'party' | 'account'; external_id: string }, at: string | Date, data?: Record<string, unknown>): Promise<void>;
  // Starts the detection pipeline too (with these detectors); settle() then waits for it as well.
  startDetection(options?: Partial<Pick<DetectPipelineOptions, 'library' | 'episodes' | 'silence' | 'onError'>>): Promise<DetectPipeline>;
  // Waits until canonical, graph and aggregates (and detection, once started) have taken in everything sent.
  settle(): Promise<void>;
  // Evaluates one detector through the framework; params go over the detector's defaults.
  evaluate(detector: AnyDetector, subject: SubjectRef, at: string | Date, options?: { params?: Record<string, unknown>; trigger?: TriggerKind; baseAsset?: string }): Promise<DetectorOutcome>;
  close(): Promise<void>;
}

const iso = (at: string | Date) => (typeof at === 'string' ? at : at.toISOString());

// env: settings for the API (e.g. a larger rate limit for a large hand-built history).
export async function startDetectionWorld(env: Record<string, string> = {}): Promise<DetectionWorld> {
  const api = await startTestApi(env);
  const errors: unknown[] = [];
  const run: TestPipeline = await startTestPipeline(api);
  const bus = new PostgresLogBus(api.db.pool, { onError: (e) => errors.push(e) });
  const graph = new PostgresGraphStore(api.db.pool);
  const aggregates = new PostgresAggregateStore(api.db.pool);
  const groups: ConsumerGroupSpec[] = [CANONICAL, GRAPH, AGGREGATES];
  const pipelines: Array<GraphPipeline | AggregatesPipeline | DetectPipeline> = [
    await startGraphPipeline({ bus, store: graph, pool: api.db.pool, clock: api.clock }),
    await startAggregatesPipeline({ bus, store: aggregates, pool: api.db.pool, clock: api.clock }),
  ];
  const stores: DetectionStores = { pool: api.db.pool, graph, aggregates };

  const send = async (path: string, events: unknown[]) => {
    for (let i = 0; i < events.length; i += 1000) {
      const chunk = events.slice(i, i + 1000);
      const objectOf: Record<string, string> = { '/v1/parties': 'party', '/v1/accounts': 'account', '/v1/movements': 'movement', '/v1/control-events': 'control_event' };
      const res = await api.client.post('/v1/batches', { events: chunk.map((event) => ({ object: objectOf[path], event })) }, api.keys.ingest);
      const body = res.json() as { rejected: number; results: unknown[] };
      if (res.statusCode !== 202 || body.rejected > 0) throw new Error(`batch refused: ${res.statusCode} ${res.body}`);
    }
  };

  const movementOf = (spec: MovementSpec) => {
    const base = movementEvent(spec.id);
    const side = ([account, party]: [string | null, string | null], country?: string) => ({
      ...(account ? { account_id: account } : {}),
      ...(party ? { party_id: party } : {}),
      ...(country ? { counterparty: { country } } : {}),
    });
    return {
      external_id: spec.id,
      schema_version: base.schema_version,
      occurred_at: iso(spec.at),
      data: {
        type: spec.type ?? 'p2p',
        status: spec.status ?? 'completed',
        amount: { value: String(spec.value), asset: spec.asset ?? 'USD', scale: spec.scale ?? 2 },
        debit: side(spec.from, spec.fromCountry),
        credit: side(spec.to, spec.toCountry),
        ...(spec.cash !== undefined ? { cash: spec.cash } : {}),
        ...spec.extra,
      },
    };
  };

  const world: DetectionWorld = {
    api,
    stores,
    party: async (id, data = {}, at = '2026-01-01T00:00:00Z') => {
      const event = partyEvent(id);
      await send('/v1/parties', [{ ...event, occurred_at: iso(at), data: { ...event.data, identifiers: [{ type: 'email', value: `${id}@example.com` }], ...data } }]);
    },
    account: async (id, holder, data = {}, at = '2026-01-01T00:00:00Z') => {
      const event = accountEvent(id, holder);
      await send('/v1/accounts', [{ ...event, occurred_at: iso(at), data: { ...event.data, ...data } }]);
    },
    movement: (spec) => send('/v1/movements', [movementOf(spec)]),
    movements: (specs) => send('/v1/movements', specs.map(movementOf)),
    movementsInTurn: async (specs) => {
      for (const spec of specs) {
        await world.movement(spec);
        await world.settle();
      }
    },
    importMovements: async (specs, goLiveAt) => {
      // The mapping carries only these members: a spec asking for more would land as another event.
      const beyond = specs.find((spec) => spec.scale !== undefined || spec.cash !== undefined || spec.fromCountry || spec.toCountry || spec.extra);
      if (beyond) throw new Error(`importMovements maps id, at, type, status, value, asset and the legs only; ${beyond.id} asks for more`);
      const optional = (from: string) => ({ from, optional: true });
      const mapping = movementMapping({ kind: 'jsonl' }, {
        'data.type': { from: 'type' },
        'data.status': { from: 'status' },
        'data.amount': { type: 'money', value: { from: 'minor' }, asset: { from: 'asset' }, units: 'minor' },
        'data.debit.account_id': optional('debitAccount'),
        'data.debit.party_id': optional('debitParty'),
        'data.credit.account_id': optional('creditAccount'),
        'data.credit.party_id': optional('creditParty'),
      });
      const lines = specs.map((spec) =>
        JSON.stringify({
          id: spec.id,
          at: iso(spec.at),
          type: spec.type ?? 'p2p',
          status: spec.status ?? 'completed',
          minor: String(spec.value),
          asset: spec.asset ?? 'USD',
          debitAccount: spec.from[0],
          debitParty: spec.from[1],
          creditAccount: spec.to[0],
          creditParty: spec.to[1],
        }),
      );
      const created = await api.client.post('/v1/imports', { mapping, go_live_at: goLiveAt }, api.keys.ingest);
      if (created.statusCode !== 201) throw new Error(`import refused: ${created.statusCode} ${created.body}`);
      const { import_id: id } = importViewSchema.parse(created.json());
      await api.client.send({ method: 'PUT', url: `/v1/imports/${id}/chunks/0`, body: Buffer.from(`${lines.join('\n')}\n`), key: api.keys.ingest, headers: { 'content-type': 'application/x-ndjson' } });
      await api.client.post(`/v1/imports/${id}/submit`, { chunk_count: 1 }, api.keys.ingest);
      const worker = new ImportWorker({ pool: api.db.pool, clock: api.clock, assets: new TenantAssetRegistry(api.db.pool), futureSkewMs: 300_000 });
      while (await worker.step());
      const done = importViewSchema.parse((await api.client.get(`/v1/imports/${id}`, api.keys.ingest)).json());
      if (done.state !== 'completed' || done.accepted !== specs.length) throw new Error(`import did not land every movement: ${JSON.stringify(done)}`);
    },
    controlEvent: async (id, type, subject, at, data = {}) => {
      const base = controlEventEvent(id);
      await send('/v1/control-events', [{ external_id: id, schema_version: base.schema_version, occurred_at: iso(at), data: { type, subject, ...data } }]);
    },
    startDetection: async (options = {}) => {
      const detect = await startDetectPipeline({ bus, pool: api.db.pool, graph, aggregates, clock: api.clock, onError: (e) => errors.push(e), ...options });
      pipelines.unshift(detect);
      groups.push(DETECT);
      return detect;
    },
    settle: async () => {
      await run.drain();
      await drain(bus, errors, groups);
    },
    evaluate: async (detector, subject, at, options = {}) => {
      const compiled = compileRuleset(1, { name: 'test', detectors: { [detector.id]: { params: options.params ?? {} } } }, [detector]);
      if (!compiled.ok) throw new Error(`bad parameters: ${JSON.stringify(compiled.issues)}`);
      const tenantId = api.tenantId;
      const { rows } = await api.db.pool.query<{ movement: boolean; control_event: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM canonical_movements WHERE tenant_id = $1) AS movement,
                EXISTS (SELECT 1 FROM canonical_control_events WHERE tenant_id = $1) AS control_event`,
        [tenantId],
      );
      const seen = new Set(Object.entries(rows[0]!).filter(([, v]) => v).map(([k]) => k));
      // Loaded as the pipeline loads a batch, so detectors are tested on the reads they get there.
      const [prefetched] = await prefetch(stores, [{ tenantId, subject, at: new Date(iso(at)) }]);
      const ctx = new SubjectContext(stores, tenantId, options.baseAsset ?? 'USD', subject, new Date(iso(at)), null, prefetched);
      const [evaluation] = await evaluateSubject(ctx, compiled.ruleset, options.trigger ?? detector.triggers[0]!, seen);
      if (!evaluation) return { outcome: 'not_applicable', reason: `${detector.id} does not evaluate ${subject.kind} subjects on this trigger` };
      return evaluation.outcome;
    },
    close: async () => {
      for (const pipeline of pipelines) await pipeline.stop();
      await run.stop();
      await api.close();
    },
  };
  return world;
}

// The world's aggregate store, counting the calls made to it by name.
export function countingAggregates(world: DetectionWorld): { store: AggregateStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const real = world.stores.aggregates;
  const store = new Proxy(real, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls };
}
