import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Breaks: the work a reconciliation's mismatch opens. Acting on one takes the ingest scope and no
// Idempotency-Key; a repeated action answers 409 svc:reconciliation/break_state, never twice.

export class ReconciliationBreaks {
  constructor(private readonly http: HttpClient) {}

  /** Breaks, newest first, across every page (scope ingest or read). */
  list(query: Filters<Api.ReconciliationBreaksQuery> = {}, options?: RequestOptions): PageIterator<Api.ReconciliationBreak, Api.ReconciliationBreakPage> {
    return pagedList(this.http, '/v1/reconciliation-breaks', query, options);
  }

  /** A break with who acknowledged, commented on and resolved it, and when. */
  retrieve(breakId: string, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationBreak>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/reconciliation-breaks/${breakId}`, expect: [200], options });
  }

  /** Acknowledges an open break; a note is kept as its comment. */
  acknowledge(breakId: string, request: Api.BreakAcknowledgeRequest = {}, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationBreak>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/reconciliation-breaks/${breakId}/acknowledge`, json: request, expect: [200], options });
  }

  /** Comments on a break, in any state. */
  comment(breakId: string, request: Api.BreakCommentRequest, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationBreak>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/reconciliation-breaks/${breakId}/comments`, json: request, expect: [200], options });
  }

  /** Resolves an open or acknowledged break, saying how. */
  resolve(breakId: string, request: Api.BreakResolveRequest, options?: RequestOptions): Promise<WithResponse<Api.ReconciliationBreak>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/reconciliation-breaks/${breakId}/resolve`, json: request, expect: [200], options });
  }
}
