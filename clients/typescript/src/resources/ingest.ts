import type * as Api from '../generated/api-types.ts';
import { idempotencyKeyFor, pathOf, type HttpClient, type IngestOptions, type RequestOptions, type WithResponse } from '../http.ts';

// Ingestion (scope ingest): the six single-event endpoints, batches, validation and event status.
// Every ingest call carries an Idempotency-Key (yours, or one the SDK makes), so it is retried
// safely: a repeat returns the stored receipt and nothing is processed twice.

export class IngestEndpoint<E> {
  constructor(
    protected readonly http: HttpClient,
    private readonly collection: string,
  ) {}

  /**
   * 202: accepted and committed, or a duplicate of an event already accepted under another key
   * (`idempotent_replay` in the receipt). A repeat of this very request (same Idempotency-Key,
   * after a retry, say) returns the stored receipt verbatim: `lastResponse.idempotentReplayed`.
   */
  ingest(event: E, options?: IngestOptions): Promise<WithResponse<Api.IngestReceipt>> {
    return this.http.json({
      method: 'POST',
      path: this.collection,
      json: event,
      expect: [202],
      idempotencyKey: idempotencyKeyFor(options),
      correlationId: options?.correlationId,
      options,
    });
  }
}

export class Batches {
  constructor(private readonly http: HttpClient) {}

  /**
   * 1-1000 events of mixed families, accepted atomically and validated per item. Resolves with
   * the batch response on 202 (at least one accepted) and on 422 (every item rejected): check
   * `results[i].outcome`.
   */
  create(request: Api.BatchRequest, options?: IngestOptions): Promise<WithResponse<Api.BatchResponse>> {
    return this.http.json({
      method: 'POST',
      path: '/v1/batches',
      json: request,
      expect: [202, 422],
      idempotencyKey: idempotencyKeyFor(options),
      correlationId: options?.correlationId,
      options,
    });
  }
}

export class Events {
  constructor(private readonly http: HttpClient) {}

  /** Where an accepted event is (evt_ id, or its bare uuid). */
  retrieve(eventId: string, options?: RequestOptions): Promise<WithResponse<Api.EventStatus>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/events/${eventId}`, expect: [200], options });
  }
}

/** A BatchRequest, or one item with object and event. */
export type ValidateRequest = Api.BatchRequest | Api.BatchItem;

/** Runs the live validation; nothing is stored. Resolves on 200 (all valid) and 422 (`valid: false`). */
export function validate(http: HttpClient, request: ValidateRequest, options?: RequestOptions): Promise<WithResponse<Api.DryRunResponse>> {
  return http.json({ method: 'POST', path: '/v1/validate', json: request, expect: [200, 422], options });
}
