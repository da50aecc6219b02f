import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { ApiKeyStore, Scope } from '../../../platform/keys/api-keys.ts';
import type { NonceLedger } from '../../../platform/keys/nonce-ledger.ts';
import { authenticate, NONCE_REPLAYED_DETAIL } from '../auth/authenticate.ts';
import { rawBody } from '../../../platform/http/json-body.ts';
import { sendProblem } from '../../../platform/http/problem-reply.ts';

// What a route admits: signed requests with one of its scopes, anyone (public), or nobody (it
// declared neither, and is refused rather than left open).
export interface RouteAccess {
  method: string;
  url: string;
  access: readonly Scope[] | 'public' | 'nobody';
}

const accessOf = (config: { scopes?: readonly Scope[]; public?: true } | undefined): RouteAccess['access'] =>
  config?.public ? 'public' : config?.scopes && config.scopes.length > 0 ? config.scopes : 'nobody';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// Every route is signed unless it says it is public: verify, then check the scope. Registered
// before the routes, so that each route's declaration is recorded as it is added.
export function registerAuthentication(
  app: FastifyInstance,
  deps: { keys: ApiKeyStore; nonces: NonceLedger; durableNonces: NonceLedger; clock: Clock },
): void {
  // Read when asked: a plugin's own onRoute hook (docs.ts) may declare a route public after this
  // hook has seen it.
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  app.decorate('routeAccess', {
    getter: (): RouteAccess[] => routes.flatMap((route) => [route.method].flat().map((method) => ({ method, url: route.url, access: accessOf(route.config) }))),
  });
  app.addHook('preHandler', async (request, reply) => {
    // No route matched: the not-found handler answers 404 as it is.
    if (request.is404) return;
    const access = accessOf(request.routeOptions.config);
    if (access === 'public') return;
    if (access === 'nobody') {
      return sendProblem(request, reply, 'svc:auth/insufficient_scope', { detail: 'this endpoint admits no credential' });
    }
    // A fragment is never part of a request target (RFC 9110), and the signature does not cover
    // one, while the query parser would read parameters past a '#': refused, not half-signed.
    if (request.url.includes('#')) {
      return sendProblem(request, reply, 'svc:request/bad_request', { detail: 'a request target holds no fragment (#); percent-encode it as %23' });
    }
    const outcome = await authenticate(
      { method: request.method, target: request.url, headers: request.headers, body: rawBody(request) },
      { findKey: (id) => deps.keys.find(id), now: () => deps.clock.now() },
    );
    if (!outcome.ok) return sendProblem(request, reply, outcome.code, { detail: outcome.detail });
    const scoped = access.some((scope) => outcome.key.scopes.includes(scope));
    if (scoped && request.routeOptions.config.claimsNonce) {
      request.apiKey = outcome.key;
      request.pendingNonce = { nonce: outcome.nonce, at: outcome.at };
      return;
    }
    // Claimed before the scope is checked: a refused request's nonce is spent too. A read's claim
    // may be lost in a database crash (replaying a read changes nothing); a write's may not.
    const ledger = SAFE_METHODS.has(request.method) ? deps.nonces : deps.durableNonces;
    if (!(await ledger.claim(outcome.key, outcome.nonce, outcome.at))) {
      return sendProblem(request, reply, 'svc:auth/nonce_replayed', { detail: NONCE_REPLAYED_DETAIL });
    }
    if (!scoped) {
      return sendProblem(request, reply, 'svc:auth/insufficient_scope', {
        detail: `this endpoint needs a credential with scope ${access.join(' or ')}`,
      });
    }
    request.apiKey = outcome.key;
  });
}
