import type { FastifyInstance } from 'fastify';
import { registerAlertRoutes } from './alerts.ts';
import type { ConsoleRouteDeps } from './common.ts';
import { registerEpisodeRoutes } from './episodes.ts';
import { registerPartyRoutes } from './parties.ts';
import { registerReconciliationBreakRoutes } from './reconciliation-breaks.ts';

export type { ConsoleRouteDeps } from './common.ts';

// The analysts' work under /console/v1: every route needs a session (the session guard of
// app.ts), works in the session's tenant and, when it changes state, the CSRF header.
export function registerConsoleRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  registerAlertRoutes(app, deps);
  registerEpisodeRoutes(app, deps);
  registerPartyRoutes(app, deps);
  registerReconciliationBreakRoutes(app, deps);
}
