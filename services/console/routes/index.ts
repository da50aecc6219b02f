import type { FastifyInstance } from 'fastify';
import { registerAlertRoutes } from './alerts.ts';
import { registerAssetRoutes } from './assets.ts';
import { registerCaseExportRoutes } from '../case-exports/routes.ts';
import { registerCasePageRoutes } from './case-page.ts';
import { registerCaseReportRoutes } from './case-reports.ts';
import { registerCaseRoutes } from './cases.ts';
import type { ConsoleRouteDeps } from './common.ts';
import { registerEpisodeRoutes } from './episodes.ts';
import { registerPartyRoutes } from './parties.ts';
import { registerReconciliationBreakRoutes } from './reconciliation-breaks.ts';

export type { ConsoleRouteDeps } from './common.ts';

// The analysts' work under /console/v1: every route needs a session (the session guard of
// app.ts), works in the session's tenant and, when it changes state, the CSRF header.
export function registerConsoleRoutes(app: FastifyInstance, deps: ConsoleRouteDeps): void {
  registerAlertRoutes(app, deps);
  registerAssetRoutes(app, deps);
  registerEpisodeRoutes(app, deps);
  registerCaseRoutes(app, deps);
  registerCasePageRoutes(app, deps);
  registerCaseReportRoutes(app, deps);
  registerCaseExportRoutes(app, deps);
  registerPartyRoutes(app, deps);
  registerReconciliationBreakRoutes(app, deps);
}
