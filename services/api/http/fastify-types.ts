import type { ApiKey, Scope } from '../../../platform/keys/api-keys.ts';
import type { RouteAccess } from './authentication.ts';

declare module 'fastify' {
  interface FastifyRequest {
    // Set by the authentication hook on every route that declares scopes.
    apiKey?: ApiKey;
  }
  interface FastifyContextConfig {
    // The scopes any one of which admits a signed request.
    scopes?: readonly Scope[];
    // Answers without a credential (health, metrics, the API's documents). A route that declares
    // neither scopes nor public refuses every request: access is denied by default.
    public?: true;
  }
  interface FastifyInstance {
    // What each registered route admits, as declared (authentication.ts).
    routeAccess: readonly RouteAccess[];
  }
}


