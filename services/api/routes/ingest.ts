import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TenantAssetRegistry } from '../../../platform/assets/tenant-registry.ts';
import type { Clock } from '../../../platform/clock.ts';
import { acceptEvents } from '../../../platform/inbox/accept-events.ts';
import type { AcceptanceQueue } from '../../../platform/inbox/acceptance-queue.ts';
import { contentHash } from '../../../platform/json/canonical-json.ts';
import { batchEventTexts } from '../../../platform/json/json-spans.ts';
import { withTransaction, type Pool } from '../../../platform/postgres/pool.ts';
import type { TokenBuckets } from '../../../platform/rate-limit/token-buckets.ts';
import { FAMILIES, FAMILY_NAMES, type Family } from '../../../schemas/families/index.ts';
import { bodyRefusal, readJsonBody, rawBody } from '../../../platform/http/json-body.ts';
import { chargeEvents } from '../http/rate-limit-headers.ts';
import { requestPath } from '../../../platform/http/problem-reply.ts';
import { batchContract, ingestContract } from '../http/ingest-contracts.ts';
import {
  claimIdempotencyKey,
  IDEMPOTENCY_KEY,
  storeIdempotentResponse,
  type StoredResponse,
} from '../ingest/idempotency.ts';
import { ingestItems, type IncomingItem, type ItemResult } from '../ingest/ingest-items.ts';
import { batchResponse, problemResponse, singleResponse } from '../ingest/render.ts';
import { batchItems, wrapperRefusal, type RequestItems } from '../ingest/request-items.ts';

export interface IngestDeps {
  pool: Pool;
  clock: Clock;
  queue: AcceptanceQueue;
  buckets: TokenBuckets;
  assets: TenantAssetRegistry;
  occurredAtFutureSkewS: number;
  idempotencyRetentionS: number;
}

type Shape = { kind: 'single'; family: Family } | { kind: 'batch' };

// The six single-event endpoints and POST /v1/batches. Order of work: parse, size the request,
// charge the rate limit (a batch costs its item count), then validate and commit, either through
// the group-commit queue or, with an Idempotency-Key, in a transaction that also stores the
// response for replay.
export function registerIngestRoutes(app: FastifyInstance, deps: IngestDeps): void {
  for (const family of FAMILY_NAMES) {
    app.post(FAMILIES[family].path, { config: { scopes: ['ingest'] }, schema: ingestContract(family) }, (request, reply) =>
      handle(request, reply, { kind: 'single', family }, deps),
    );
  }
  app.post('/v1/batches', { config: { scopes: ['ingest'] }, schema: batchContract }, (request, reply) => handle(request, reply, { kind: 'batch' }, deps));
}

async function handle(request: FastifyRequest, reply: FastifyReply, shape: Shape, deps: IngestDeps): Promise<FastifyReply> {
  const tenantId = request.apiKey!.tenantId;
  const body = readJsonBody(request);
  if (!body.ok) return send(reply, problemResponse(request, body.code, bodyRefusal(body)));

  const found = incomingItems(shape, body.value, body.text, rawBody(request));
  if (found.kind !== 'items') {
    const { code, ...refusal } = wrapperRefusal(found);
    return send(reply, problemResponse(request, code, refusal));
  }

  const idempotencyKey = request.headers['idempotency-key'];
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY.test(idempotencyKey))) {
    return send(reply, problemResponse(request, 'svc:request/bad_request', { detail: 'Idempotency-Key must be 1-255 printable ASCII characters' }));
  }

  const refused = await chargeEvents(reply, deps.buckets, tenantId, found.items.length);
  if (refused) return send(reply, problemResponse(request, 'svc:rate_limit/exceeded', { detail: refused }));

  const now = deps.clock.now();
  const context = {
    tenantId,
    receivedAt: now,
    correlationId: request.id,
    validation: { registry: await deps.assets.forTenant(tenantId), nowMs: now.getTime(), futureSkewMs: deps.occurredAtFutureSkewS * 1000 },
  };
  const render = (results: ItemResult[]) => (shape.kind === 'single' ? singleResponse(request, results[0]!) : batchResponse(request, results));

  if (idempotencyKey === undefined) {
    return send(reply, render(await ingestItems(found.items, context, (events) => deps.queue.submit(events))));
  }
  const scope = { tenantId, endpoint: requestPath(request), key: idempotencyKey };
  const outcome = await withTransaction(deps.pool, async (client) => {
    const claim = await claimIdempotencyKey(client, scope, contentHash(body.value), now, deps.idempotencyRetentionS);
    if (claim.kind !== 'owned') return claim;
    const response = render(await ingestItems(found.items, context, (events) => acceptEvents(client, events)));
    await storeIdempotentResponse(client, scope, response);
    return { kind: 'fresh' as const, response };
  });
  switch (outcome.kind) {
    case 'fresh':
      return send(reply, outcome.response);
    case 'replay':
      reply.header('Idempotent-Replayed', 'true');
      return send(reply, outcome.response);
    case 'conflict':
      return send(reply, problemResponse(request, 'svc:idempotency/key_conflict', { detail: 'this Idempotency-Key was used with a different body' }));
  }
}

type Incoming = { kind: 'items'; items: IncomingItem[] } | Exclude<RequestItems, { kind: 'items' }>;

function incomingItems(shape: Shape, value: unknown, text: string, raw: Buffer): Incoming {
  if (shape.kind === 'single') {
    return { kind: 'items', items: [{ value: { object: shape.family, event: value }, rawEvent: raw, prefix: [] }] };
  }
  const found = batchItems(value);
  if (found.kind !== 'items') return found;
  const texts = batchEventTexts(text);
  return {
    kind: 'items',
    items: found.items.map((item, index) => {
      const eventText = texts[index];
      return { value: item, rawEvent: eventText === undefined ? undefined : Buffer.from(eventText, 'utf8'), prefix: found.prefix(index) };
    }),
  };
}

function send(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).type(response.contentType).send(response.body);
}
