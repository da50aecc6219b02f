import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { acceptEvents } from '../../../platform/inbox/accept-events.ts';
import type { AcceptanceQueue } from '../../../platform/inbox/acceptance-queue.ts';
import { contentHash } from '../../../platform/json/canonical-json.ts';
import { batchEventTexts } from '../../../platform/json/json-spans.ts';
import { withTransaction, type Pool } from '../../../platform/postgres/pool.ts';
import type { NonceLedger } from '../../../platform/keys/nonce-ledger.ts';
import type { TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';
import { FAMILIES, FAMILY_NAMES, type Family } from '../../../schemas/families/index.ts';
import { bodyRefusal, readJsonBody, rawBody, type BatchBody, type JsonBody } from '../../../platform/http/json-body.ts';
import { admissionOf, answerRefusedAdmission, refuseClaimingNonce } from '../http/admission.ts';
import { requestPath } from '../../../platform/http/problem-reply.ts';
import { batchContract, ingestContract } from '../http/ingest-contracts.ts';
import {
  claimIdempotencyKey,
  IDEMPOTENCY_KEY,
  storeIdempotentResponse,
  type StoredResponse,
} from '../ingest/idempotency.ts';
import { ingestItems, prepareItems, settleItems, type IncomingItem, type ItemResult } from '../ingest/ingest-items.ts';
import { batchResponse, problemResponse, singleResponse } from '../ingest/render.ts';
import { batchItems, wrapperRefusal, type RequestItems } from '../ingest/request-items.ts';
import type { ConformanceTally } from '../../conformance/tally.ts';

export interface IngestDeps {
  pool: Pool;
  clock: Clock;
  queue: AcceptanceQueue;
  // Admissions alone (nonce and charge, nothing written), committed without waiting for the WAL
  // flush like any nonce claim (decision 0004).
  admissions: AcceptanceQueue;
  nonces: NonceLedger;
  buckets: TokenBuckets;
  assets: TenantAssetRegistry;
  occurredAtFutureSkewS: number;
  idempotencyRetentionS: number;
  // What became of each item, counted for conformance drift (decision 0077).
  conformance: ConformanceTally;
}

type Shape = { kind: 'single'; family: Family } | { kind: 'batch' };

// The six single-event endpoints and POST /v1/batches. Order of work: parse and size the request
// (a refusal there claims the nonce first), then validate, and admit and commit in one statement
// (nonce claim, rate-limit charge at a batch's item count, events) through the group-commit queue.
// A request is admitted before it is validated instead when it carries an Idempotency-Key (its
// transaction also stores the response for replay) or when its tenant's bucket last looked too
// empty to pay for it (an over-limit tenant costs no validation work). Either way a replayed
// nonce answers 401 and a refused charge 429 whatever the body holds, and neither writes anything.
export function registerIngestRoutes(app: FastifyInstance, deps: IngestDeps): void {
  const config = { scopes: ['ingest'], claimsNonce: true } as const;
  for (const family of FAMILY_NAMES) {
    app.post(FAMILIES[family].path, { config, schema: ingestContract(family) }, (request, reply) => handle(request, reply, { kind: 'single', family }, deps));
  }
  app.post('/v1/batches', { config, schema: batchContract }, (request, reply) => handle(request, reply, { kind: 'batch' }, deps));
}

async function handle(request: FastifyRequest, reply: FastifyReply, shape: Shape, deps: IngestDeps): Promise<FastifyReply> {
  const tenantId = request.apiKey!.tenantId;
  const body = readJsonBody(request, { batch: shape.kind === 'batch' });
  if (!body.ok) return refuseClaimingNonce(request, reply, deps, body.code, asItemPaths(shape, bodyRefusal(body)));

  const found = incomingItems(shape, body, rawBody(request));
  if (found.kind !== 'items') {
    const { code, ...refusal } = wrapperRefusal(found);
    return refuseClaimingNonce(request, reply, deps, code, refusal);
  }

  const idempotencyKey = request.headers['idempotency-key'];
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey))) {
    return refuseClaimingNonce(request, reply, deps, 'svc:request/bad_request', { detail: 'Idempotency-Key must be 1-255 printable ASCII characters' });
  }

  const cost = found.items.length;
  const admission = admissionOf(request, cost, await deps.buckets.prepare(tenantId));
  const admitFirst = idempotencyKey !== undefined || deps.buckets.likelyShort(tenantId, cost);
  if (admitFirst) {
    const refused = answerRefusedAdmission(request, reply, await deps.admissions.admit(admission), cost);
    if (refused) return refused;
  }

  const now = deps.clock.now();
  const context = {
    tenantId,
    receivedAt: now,
    correlationId: request.id,
    validation: { registry: await deps.assets.forTenant(tenantId), nowMs: now.getTime(), futureSkewMs: deps.occurredAtFutureSkewS * 1000 },
  };
  const render = (results: ItemResult[]) => (shape.kind === 'single' ? singleResponse(request, results[0]!) : batchResponse(request, results));

  if (idempotencyKey === undefined) {
    const prepared = prepareItems(found.items, context);
    const accepted = await deps.queue.submit(prepared.events, admitFirst ? undefined : admission);
    if (accepted.admission) {
      const refused = answerRefusedAdmission(request, reply, accepted.admission, cost);
      if (refused) return refused;
    }
    const results = settleItems(found.items, prepared, accepted.outcomes);
    tally(deps, tenantId, now, found.items, results);
    return send(reply, render(results));
  }
  // The endpoint is the route, not its spelling: /v1/%70arties reaches (and signs as) /v1/parties.
  const scope = { tenantId, endpoint: request.routeOptions.url ?? requestPath(request), key: idempotencyKey };
  const outcome = await withTransaction(deps.pool, async (client) => {
    const claim = await claimIdempotencyKey(client, scope, contentHash(body.value), now, deps.idempotencyRetentionS);
    if (claim.kind !== 'owned') return claim;
    const results = await ingestItems(found.items, context, (events) => acceptEvents(client, events));
    const response = render(results);
    await storeIdempotentResponse(client, scope, response);
    return { kind: 'fresh' as const, response, results };
  });
  switch (outcome.kind) {
    case 'fresh':
      // A replay was counted when it was answered first.
      tally(deps, tenantId, now, found.items, outcome.results);
      return send(reply, outcome.response);
    case 'replay':
      reply.header('Idempotent-Replayed', 'true');
      return send(reply, outcome.response);
    case 'conflict':
      return send(reply, problemResponse(request, 'svc:idempotency/key_conflict', { detail: 'this Idempotency-Key was used with a different body' }));
  }
}

function tally(deps: IngestDeps, tenantId: string, at: Date, items: IncomingItem[], results: ItemResult[]): void {
  const findings = (result: ItemResult) => (result.kind === 'accepted' ? [] : result.errors);
  deps.conformance.note(tenantId, at, items.map((item, i) => ({ value: item.value, prefix: item.prefix, errors: findings(results[i]!) })));
}

// A single-event body is the item's event: its refusal's paths start `event.`, as every other
// error of these routes does (decision 0002); a batch's body paths already are item paths.
function asItemPaths(shape: Shape, refusal: ReturnType<typeof bodyRefusal>): ReturnType<typeof bodyRefusal> {
  if (shape.kind !== 'single' || !refusal.errors) return refusal;
  return { ...refusal, errors: refusal.errors.map((e) => ({ ...e, path: e.path === '' ? 'event' : `event.${e.path}` })) };
}

type Incoming = { kind: 'items'; items: IncomingItem[] } | Exclude<RequestItems, { kind: 'items' }>;

function incomingItems(shape: Shape, body: Extract<JsonBody, { ok: true }>, raw: Buffer): Incoming {
  if (shape.kind === 'single') {
    return { kind: 'items', items: [{ value: { object: shape.family, event: body.value }, rawEvent: raw, prefix: [] }] };
  }
  const found = batchItems(body.value);
  if (found.kind !== 'items') return found;
  // Read item by item whenever the body is a batch envelope, which batchItems has just found.
  const items: BatchBody['items'] = body.batch?.items ?? batchEventTexts(body.text).map((eventText) => ({ eventText }));
  return {
    kind: 'items',
    items: found.items.map((item, index) => {
      const { eventText, refusal } = items[index] ?? { eventText: undefined };
      return {
        value: item,
        rawEvent: eventText === undefined ? undefined : Buffer.from(eventText, 'utf8'),
        prefix: found.prefix(index),
        ...(refusal ? { refusal } : {}),
      };
    }),
  };
}

function send(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).type(response.contentType).send(response.body);
}
