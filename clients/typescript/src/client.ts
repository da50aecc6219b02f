import type * as Api from './generated/api-types.ts';
import { HttpClient, type ClientOptions, type RequestOptions, type WithResponse } from './http.ts';
import { Graph, Parties, Posture, ReadableFamily } from './resources/canonical.ts';
import { Alerts, Episodes } from './resources/compliance.ts';
import { Imports } from './resources/imports.ts';
import { Batches, Events, IngestEndpoint, validate, type ValidateRequest } from './resources/ingest.ts';
import { Reconciliations } from './resources/reconciliations.ts';
import { WebhookDeliveries, WebhookEndpoints } from './resources/webhooks.ts';

/**
 * A client of the service's public API with one credential. Each credential carries its scopes
 * (ingest, read, webhook_mgmt, compliance): make one client per credential.
 *
 * ```ts
 * const svc = new SvcClient({ baseUrl: 'https://svc.example.com', keyId: process.env.SVC_KEY_ID!, secret: process.env.SVC_KEY_SECRET! });
 * const receipt = await svc.parties.ingest({ external_id: 'p-1', schema_version: '2026-09-01', occurred_at, data });
 * ```
 */
export class SvcClient {
  readonly parties: Parties;
  readonly accounts: ReadableFamily<Api.AccountEvent>;
  readonly instruments: ReadableFamily<Api.InstrumentEvent>;
  readonly movements: ReadableFamily<Api.MovementEvent, Api.MovementView>;
  readonly relationships: IngestEndpoint<Api.RelationshipEvent>;
  readonly controlEvents: IngestEndpoint<Api.ControlEventEvent>;
  readonly batches: Batches;
  readonly events: Events;
  readonly posture: Posture;
  readonly graph: Graph;
  readonly alerts: Alerts;
  readonly episodes: Episodes;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly webhookDeliveries: WebhookDeliveries;
  readonly imports: Imports;
  readonly reconciliations: Reconciliations;
  private readonly http: HttpClient;

  constructor(options: ClientOptions) {
    const http = new HttpClient(options);
    this.http = http;
    this.parties = new Parties(http);
    this.accounts = new ReadableFamily(http, '/v1/accounts');
    this.instruments = new ReadableFamily(http, '/v1/instruments');
    this.movements = new ReadableFamily(http, '/v1/movements');
    this.relationships = new IngestEndpoint(http, '/v1/relationships');
    this.controlEvents = new IngestEndpoint(http, '/v1/control-events');
    this.batches = new Batches(http);
    this.events = new Events(http);
    this.posture = new Posture(http);
    this.graph = new Graph(http);
    this.alerts = new Alerts(http);
    this.episodes = new Episodes(http);
    this.webhookEndpoints = new WebhookEndpoints(http);
    this.webhookDeliveries = new WebhookDeliveries(http);
    this.imports = new Imports(http);
    this.reconciliations = new Reconciliations(http);
  }

  /** Runs the live validation on a batch or one item (scope ingest or read); nothing is stored. */
  validate(request: ValidateRequest, options?: RequestOptions): Promise<WithResponse<Api.DryRunResponse>> {
    return validate(this.http, request, options);
  }

  /** Liveness; needs no credential, though the SDK signs it like every request. */
  health(options?: RequestOptions): Promise<WithResponse<Api.Health>> {
    return this.http.json({ method: 'GET', path: '/health', expect: [200], options });
  }
}
