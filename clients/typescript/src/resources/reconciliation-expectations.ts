import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type ResponseMeta, type WithResponse } from '../http.ts';

// Expected declarations: a declaration every UTC day for a scope and asset, due minutes after the
// day ends; a late one is announced as coverage.degraded.

export class ReconciliationExpectations {
  constructor(private readonly http: HttpClient) {}

  /** Expects a daily declaration (scope ingest); 409 svc:reconciliation/expectation_exists when already expected. */
  create(request: Api.ReconciliationExpectationRequest, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationExpectation>> {
    return this.http.json({ method: 'POST', path: '/v1/reconciliation-expectations', json: request, expect: [201], options });
  }

  /** Every expectation of the tenant. */
  list(options?: RequestOptions): Promise<WithResponse<Api.ReconciliationExpectationList>> {
    return this.http.json({ method: 'GET', path: '/v1/reconciliation-expectations', expect: [200], options });
  }

  /** Stops expecting a declaration. */
  delete(expectationId: string, options?: RequestOptions): Promise<ResponseMeta> {
    return this.http.empty({ method: 'DELETE', path: pathOf`/v1/reconciliation-expectations/${expectationId}`, expect: [204], options });
  }
}
