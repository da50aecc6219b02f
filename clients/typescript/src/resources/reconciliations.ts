import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';
import { ReconciliationBreaks } from './reconciliation-breaks.ts';
import { ReconciliationExpectations } from './reconciliation-expectations.ts';

// Reconciliations: customer-declared control totals compared with what the service observed.
// Declaring one takes no Idempotency-Key, so the SDK never retries it; declared with a
// customer_reference, calling create again is safe (the same content answers the original, 200).

export class Reconciliations {
  /** The breaks mismatches open, worked to resolution. */
  readonly breaks: ReconciliationBreaks;
  /** The declarations expected every day, and by when. */
  readonly expectations: ReconciliationExpectations;

  constructor(private readonly http: HttpClient) {
    this.breaks = new ReconciliationBreaks(http);
    this.expectations = new ReconciliationExpectations(http);
  }

  /** Declares a control total (scope ingest); 201 with its first comparison, 200 for a repeat of the same customer_reference and content. */
  create(request: Api.ReconciliationRequest, options?: RequestOptions): Promise<WithResponse<Api.Reconciliation>> {
    return this.http.json({ method: 'POST', path: '/v1/reconciliations', json: request, expect: [200, 201], options });
  }

  /** Reconciliations, newest first, with their latest result, across every page (scope ingest or read). */
  list(query: Filters<Api.ReconciliationsQuery> = {}, options?: RequestOptions): PageIterator<Api.Reconciliation, Api.ReconciliationPage> {
    return pagedList(this.http, '/v1/reconciliations', query, options);
  }

  /** A reconciliation with every distinct result. */
  retrieve(reconciliationId: string, options?: RequestOptions): Promise<WithResponse<Api.Reconciliation>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/reconciliations/${reconciliationId}`, expect: [200], options });
  }

  /** Every difference item of a reconciliation, across every page. */
  items(reconciliationId: string, query: Filters<Omit<Api.ReconciliationsItemsQuery, 'format'>> = {}, options?: RequestOptions): PageIterator<Api.ReconciliationItemPage['data'][number], Api.ReconciliationItemPage> {
    return pagedList(this.http, pathOf`/v1/reconciliations/${reconciliationId}/items`, query, options);
  }

  /**
   * Every difference item as CSV (RFC 4180, header row first), read whole: `timeoutMs` bounds the
   * whole download, and a connection cut part-way is an `SvcConnectionError`.
   */
  itemsCsv(reconciliationId: string, options?: RequestOptions): Promise<string> {
    return this.http.text({ method: 'GET', path: pathOf`/v1/reconciliations/${reconciliationId}/items`, query: { format: 'csv' }, expect: [200], options });
  }
}
