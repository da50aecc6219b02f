import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type ResponseMeta, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Expected declarations: a declaration every UTC day for a scope and asset, due minutes after the
// day ends; a late one is announced as coverage.degraded.

export class ReconciliationExpectations {
  constructor(private readonly http: HttpClient) {}

  /** Expects a daily declaration (scope ingest); 409 svc:reconciliation/expectation_exists when already expected. */
  create(request: Api.ReconciliationExpectationRequest, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationExpectation>> {
    return this.http.json({ method: 'POST', path: '/v1/reconciliation-expectations', json: request, expect: [201], options });
  }

  /** The tenant's expectations, a page at a time (`limit` per page; the iterator follows `next_cursor`). */
  list(query: Filters<Api.ReconciliationExpectationsQuery> = {}, options?: RequestOptions): PageIterator<Api.ReconciliationExpectation, Api.ReconciliationExpectationList> {
    return pagedList(this.http, '/v1/reconciliation-expectations', query, options);
  }

  /** Stops expecting a declaration. */
  delete(expectationId: string, options?: RequestOptions): Promise<ResponseMeta> {
    return this.http.empty({ method: 'DELETE', path: pathOf`/v1/reconciliation-expectations/${expectationId}`, expect: [204], options });
  }
}
