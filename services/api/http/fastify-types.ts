import type { ApiKey, Scope } from '../../../platform/keys/api-keys.ts';

declare module 'fastify' {
  interface FastifyRequest {
    // Set by the authentication hook on every route that declares scopes.
    apiKey?: ApiKey;
  }
  interface FastifyContextConfig {
    // The scopes any one of which admits a request; a route without scopes is public.
    scopes?: readonly Scope[];
  }
}

export {};
