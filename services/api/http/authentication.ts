import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { ApiKeyStore } from '../../../platform/keys/api-keys.ts';
import type { NonceLedger } from '../../../platform/keys/nonce-ledger.ts';
import { authenticate } from '../auth/authenticate.ts';
import { rawBody } from './json-body.ts';
import { sendProblem } from './problem-reply.ts';

// Every route that declares scopes is signed: verify, then check the scope.
export function registerAuthentication(
  app: FastifyInstance,
  deps: { keys: ApiKeyStore; nonces: NonceLedger; clock: Clock },
): void {
  app.addHook('preHandler', async (request, reply) => {
    const scopes = request.routeOptions.config.scopes;
    if (!scopes) return;
    const outcome = await authenticate(
      { method: request.method, target: request.url, headers: request.headers, body: rawBody(request) },
      { findKey: (id) => deps.keys.find(id), claimNonce: (k, n, at) => deps.nonces.claim(k, n, at), now: () => deps.clock.now() },
    );
    if (!outcome.ok) return sendProblem(request, reply, outcome.code, { detail: outcome.detail });
    if (!scopes.some((scope) => outcome.key.scopes.includes(scope))) {
      return sendProblem(request, reply, 'svc:auth/insufficient_scope', {
        detail: `this endpoint needs a credential with scope ${scopes.join(' or ')}`,
      });
    }
    request.apiKey = outcome.key;
  });
}
