import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, preHandlerHookHandler, RouteOptions } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendContractViolation } from './validation-problem.ts';

// Routes declare their contract as zod schemas (fastify-type-provider-zod): params, query, body
// and responses, from which handlers are typed and the OpenAPI document is generated.
//
// - Bodies stay the raw bytes the signature covers (edge-app.ts) and each route parses its own
//   after authentication (readJsonBody, then its validator), so a body schema is declared for the
//   document and not run here: `request.body` is still the bytes, and no handler reads it.
// - A refused parameter must not answer before authentication does (an unsigned request gets its
//   401 whatever its query), so findings are attached to the request and answered after the
//   route's own preHandlers, just before the handler, as the governed problem.
// - Responses are written with JSON.stringify as before: the schemas type each handler's return
//   and the document, and are not re-run on every answer (tests parse answers with them).
export interface RouteContract {
  method: string;
  url: string;
  schema: FastifySchema | undefined;
}

const answerViolation: preHandlerHookHandler = function (request: FastifyRequest, reply: FastifyReply, done) {
  if (request.validationError) {
    sendContractViolation(request, reply, request.validationError);
    return;
  }
  done();
};

export function registerContracts(app: FastifyInstance): void {
  app.setValidatorCompiler((route) => (route.httpPart === 'body' || route.httpPart === 'headers' ? (data: unknown) => ({ value: data }) : validatorCompiler(route as Parameters<typeof validatorCompiler>[0])));
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  const contracts: RouteContract[] = [];
  app.decorate('routeContracts', { getter: (): RouteContract[] => contracts.slice() });
  app.addHook('onRoute', (route: RouteOptions) => {
    for (const method of [route.method].flat()) contracts.push({ method, url: route.url, schema: route.schema });
    if (!route.schema?.querystring && !route.schema?.params) return;
    route.attachValidation = true;
    route.preHandler = [...[route.preHandler ?? []].flat(), answerViolation];
  });

  // An empty value counts as absent (`?limit=` is no limit), as it always has.
  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (!query || typeof query !== 'object') return;
    for (const [name, value] of Object.entries(query)) if (value === '') delete query[name];
  });
}

// Routes of the public API whose contract is incomplete: no response declared for a success
// status, or a declared response that is not a zod schema (nothing to type or document it).
export function incompleteContracts(contracts: readonly RouteContract[]): string[] {
  const isZod = (value: unknown) => value instanceof z.ZodType;
  const declared = (entry: unknown) =>
    isZod(entry) ||
    (typeof entry === 'object' && entry !== null && 'content' in entry && Object.values((entry as { content: Record<string, { schema?: unknown }> }).content).every((c) => isZod(c.schema)));
  return contracts
    .filter((route) => route.url.startsWith('/v1/') && route.method !== 'HEAD')
    .flatMap((route) => {
      const responses = Object.entries((route.schema?.response ?? {}) as Record<string, unknown>);
      const where = `${route.method} ${route.url}`;
      if (!responses.some(([status]) => status.startsWith('2'))) return [`${where}: no success response declared`];
      return responses.filter(([, entry]) => !declared(entry)).map(([status]) => `${where}: response ${status} is not a zod schema`);
    });
}
