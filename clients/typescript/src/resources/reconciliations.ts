import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Reconciliations: customer-declared control totals compared with what the service observed.
// Declaring one takes no Idempotency-Key, so it is never retried.

export class Reconciliations {
  constructor(private readonly http: HttpClient) {}

  /** Declares a control total (scope ingest); 201 with its first comparison. */
  create(request: Api.ReconciliationRequest, options?: RequestOptions): Promise<WithResponse<Api.Reconciliation>> {
    return this.http.json({ method: 'POST', path: '/v1/reconciliations', json: request, expect: [201], options });
  }

  /** Reconciliations, newest first, with their latest result, across every page (scope ingest or read). */
  list(query: Filters<Api.ReconciliationsQuery> = {}, options?: RequestOptions): PageIterator<Api.Reconciliation, Api.ReconciliationPage> {
    return pagedList(this.http, '/v1/reconciliations', query, options);
  }

  /** A reconciliation with every distinct result. */
  retrieve(reconciliationId: string, options?: RequestOptions): Promise<WithResponse<Api.Reconciliation>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/reconciliations/${reconciliationId}`, expect: [200], options });
  }
}
