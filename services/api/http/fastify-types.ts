import type { ApiKey, Scope } from '../../../platform/keys/api-keys.ts';
import type { RouteAccess } from './authentication.ts';

declare module 'fastify' {
  interface FastifyRequest {
    // Set by the authentication hook on every route that declares scopes.
    apiKey?: ApiKey;
    // The verified request's nonce, not yet claimed, on a route that claims it itself
    // (claimsNonce); cleared once the route has taken it (http/admission.ts).
    pendingNonce?: { nonce: string; at: Date };
  }
  interface FastifyContextConfig {
    // The scopes any one of which admits a signed request.
    scopes?: readonly Scope[];
    // Answers without a credential (health, metrics, the API's documents). A route that declares
    // neither scopes nor public refuses every request: access is denied by default.
    public?: true;
    // The route claims the nonce of an admitted request itself, in the statement that charges the
    // request and writes its events (one round trip), and before any other answer it gives.
    claimsNonce?: true;
  }
  interface FastifyInstance {
    // What each registered route admits, as declared (authentication.ts).
    routeAccess: readonly RouteAccess[];
  }
}


