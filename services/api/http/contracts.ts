import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { useRouteContracts, type RouteContract } from '../../../platform/http/contracts.ts';

// The /v1 API's routes declare their contract as zod schemas (platform/http/contracts.ts):
// params, query, body and responses, from which handlers are typed and the OpenAPI document is
// generated.
//
// - Bodies stay the raw bytes the signature covers (edge-app.ts) and each route parses its own
//   after authentication (readJsonBody, then its validator), so a body schema is declared for the
//   document and not run here: `request.body` is still the bytes, and no handler reads it.
// - A refused parameter must not answer before authentication does (an unsigned request gets its
//   401 whatever its query), so findings are answered after the route's own preHandlers.
// - Responses are written with JSON.stringify as before: the schemas type each handler's return
//   and the document, and are not re-run on every answer (tests parse answers with them).
// - An empty value counts as absent (`?limit=` is no limit), as it always has.
export function registerContracts(app: FastifyInstance): void {
  useRouteContracts(app, { bodies: 'raw', responses: 'stringify', emptyQueryIsAbsent: true });
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
