import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Webhook endpoint management and the delivery log (scope webhook_mgmt). None of these take an
// Idempotency-Key, so none is retried: the writes create or change something.

const TEST_WAIT_MS = 130_000;

export class WebhookEndpoints {
  constructor(private readonly http: HttpClient) {}

  /** 201 with the endpoint and its secret, shown once: store it now. */
  create(registration: Api.WebhookEndpointRegistration, options?: RequestOptions): Promise<WithResponse<Api.WebhookEndpointCreated>> {
    return this.http.json({ method: 'POST', path: '/v1/webhook-endpoints', json: registration, expect: [201], options });
  }

  /** Endpoints, oldest first, across every page. */
  list(query: Filters<Api.WebhookEndpointsQuery> = {}, options?: RequestOptions): PageIterator<Api.WebhookEndpoint, Api.WebhookEndpointPage> {
    return pagedList(this.http, '/v1/webhook-endpoints', query, options);
  }

  retrieve(endpointId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookEndpoint>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/webhook-endpoints/${endpointId}`, expect: [200], options });
  }

  /** Deletes the endpoint; its pending deliveries are cancelled, its delivery log stays. */
  async delete(endpointId: string, options?: RequestOptions): Promise<void> {
    await this.http.empty({ method: 'DELETE', path: pathOf`/v1/webhook-endpoints/${endpointId}`, expect: [204], options });
  }

  /** Nothing is delivered to a disabled endpoint; its pending deliveries are cancelled. */
  disable(endpointId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookEndpoint>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/webhook-endpoints/${endpointId}/disable`, expect: [200], options });
  }

  enable(endpointId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookEndpoint>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/webhook-endpoints/${endpointId}/enable`, expect: [200], options });
  }

  /** The new secret, shown once; the previous one keeps signing until previous_secret_valid_until. */
  rotateSecret(endpointId: string, request?: Api.SecretRotationRequest, options?: RequestOptions): Promise<WithResponse<Api.SecretRotation>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/webhook-endpoints/${endpointId}/rotate-secret`, ...(request ? { json: request } : {}), expect: [200], options });
  }

  /**
   * Sends a signed webhook.test and waits for its one attempt: resolves with the delivery when the
   * endpoint answered 2xx. Throws SvcApiError with code svc:webhook/endpoint_failed (502) when it
   * did not, and svc:webhook/test_timeout (504) when the result was not observed in time (not a
   * refusal: the outcome appears in the delivery list).
   */
  test(endpointId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookDelivery>> {
    // The service waits for the attempt (up to 120 s when so configured): wait longer than it.
    return this.http.json({ method: 'POST', path: pathOf`/v1/webhook-endpoints/${endpointId}/test`, expect: [200], options: { timeoutMs: TEST_WAIT_MS, ...options } });
  }
}

export class WebhookDeliveries {
  constructor(private readonly http: HttpClient) {}

  /** Deliveries, newest first, each with every attempt, across every page. */
  list(query: Filters<Api.WebhookDeliveriesQuery> = {}, options?: RequestOptions): PageIterator<Api.WebhookDelivery, Api.WebhookDeliveryPage> {
    return pagedList(this.http, '/v1/webhook-deliveries', query, options);
  }

  retrieve(deliveryId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookDelivery>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/webhook-deliveries/${deliveryId}`, expect: [200], options });
  }

  /** Sends the same envelope (same whe_ id) again to the same endpoint, as a new delivery. */
  replay(deliveryId: string, options?: RequestOptions): Promise<WithResponse<Api.WebhookDelivery>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/webhook-deliveries/${deliveryId}/replay`, expect: [202], options });
  }
}
