import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { ZodType } from 'zod';
import { bodyRefusal, readJsonBody, type JsonBody } from './json-body.ts';
import { sendProblem } from './problem-reply.ts';
import { ContractViolation, sendContractViolation, type HttpPart } from './validation-problem.ts';

// How every HTTP edge (the /v1 API and the console) declares its routes' contracts: zod schemas
// for params, query, body and responses through fastify-type-provider-zod, from which handlers
// are typed and documents generated. What the edges share:
//   - a refused part never answers before the app's own checks (authentication, the session):
//     findings are attached to the request and answered after every preHandler, just before the
//     handler, as the governed problem of validation-problem.ts;
//   - the contract each route declared is kept (app.routeContracts) for the checks over them.
// Where the edges differ, the app says how (ContractStyle), so each keeps what it answers.
export interface RouteContract {
  method: string;
  url: string;
  schema: FastifySchema | undefined;
}

export interface ContractStyle {
  // 'raw': bodies stay the bytes createEdgeApp keeps (a signature covers them) and each route
  // parses its own after authentication; a body schema documents and is not run here.
  // 'json': a route that declares a body schema has it parsed (readJsonBody) and validated.
  bodies: 'raw' | 'json';
  // 'stringify': answers are written with JSON.stringify; the schemas type each handler's return
  // and the document. 'encode': every answer goes through its declared schema.
  responses: 'stringify' | 'encode';
  // An empty query value counts as absent (`?limit=` is no limit).
  emptyQueryIsAbsent: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    // A body its route's schema could not see: not JSON, or past the request bounds.
    contractBodyRefusal?: Extract<JsonBody, { ok: false }>;
  }
  interface FastifyInstance {
    // The contract (zod schemas) each registered route declared, as declared.
    routeContracts: readonly RouteContract[];
  }
}

// Call before any route is declared.
export function useRouteContracts(app: FastifyInstance, style: ContractStyle): void {
  const validated = (part: HttpPart | undefined) => part === 'querystring' || part === 'params' || style.bodies === 'json';
  app.setValidatorCompiler(({ schema, httpPart, url }) => {
    const part = (httpPart ?? 'body') as HttpPart;
    if (!validated(part)) return (data: unknown) => ({ value: data });
    if (!(schema instanceof ZodType)) throw new Error(`route ${url}: declare its ${part} schema with zod`);
    return (data: unknown) => {
      const result = schema.safeParse(data);
      return result.success ? { value: result.data } : { error: new ContractViolation(part, result.error) };
    };
  });
  app.setSerializerCompiler(style.responses === 'encode' ? serializerCompiler : () => (data) => JSON.stringify(data));

  const contracts: RouteContract[] = [];
  app.decorate('routeContracts', { getter: (): RouteContract[] => contracts.slice() });
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) contracts.push({ method, url: route.url, schema: route.schema });
    const schema = route.schema;
    const checked = schema && (schema.querystring || schema.params || (style.bodies === 'json' && (schema.body || schema.headers)));
    if (!checked) return;
    route.attachValidation = true;
    route.preHandler = [...[route.preHandler ?? []].flat(), refuseViolation];
  });

  if (style.emptyQueryIsAbsent) {
    app.addHook('preValidation', async (request) => {
      const query = request.query as Record<string, unknown> | undefined;
      if (!query || typeof query !== 'object') return;
      for (const [name, value] of Object.entries(query)) if (value === '') delete query[name];
    });
  }
  if (style.bodies === 'json') {
    app.addHook('preValidation', async (request) => {
      if (request.routeOptions.schema?.body === undefined) return;
      const body = readJsonBody(request);
      if (body.ok) request.body = body.value;
      else {
        request.contractBodyRefusal = body;
        request.body = undefined;
      }
    });
  }
}

// The last preHandler of every route with a checked part: answers what its contract refused.
async function refuseViolation(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const refusal = request.contractBodyRefusal;
  if (refusal) return sendProblem(request, reply, refusal.code, bodyRefusal(refusal));
  const violation = request.validationError;
  if (!violation) return undefined;
  if (!(violation instanceof ContractViolation)) throw violation;
  return sendContractViolation(request, reply, violation);
}
