import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';
import { IngestEndpoint } from './ingest.ts';

// Canonical reads (scope read), beside the ingest call of the same family.

export type CanonicalView = Api.CanonicalView;
export type EntityView = Api.EntityView;
export type MovementView = Api.MovementView;

// V: the view this family's reads answer (an entity's, or a movement's).
export class ReadableFamily<E, V extends CanonicalView = EntityView> extends IngestEndpoint<E> {
  constructor(
    http: HttpClient,
    protected readonly collectionPath: string,
  ) {
    super(http, collectionPath);
  }

  /** The current version; a governed 404 (SvcApiError) when unknown in this tenant. */
  retrieve(externalId: string, options?: RequestOptions): Promise<WithResponse<V>> {
    return this.http.json({ method: 'GET', path: `${this.collectionPath}${pathOf`/${externalId}`}`, expect: [200], options });
  }
}

export class Parties extends ReadableFamily<Api.PartyEvent> {
  constructor(http: HttpClient) {
    super(http, '/v1/parties');
  }

  /** The party's movements, newest first, across every page: `for await (const m of …)`. */
  movements(externalId: string, query: Filters<Api.PartiesMovementsQuery> = {}, options?: RequestOptions): PageIterator<MovementView, Api.MovementPage> {
    return pagedList(this.http, pathOf`/v1/parties/${externalId}/movements`, query, options);
  }
}

export class Posture {
  constructor(private readonly http: HttpClient) {}

  /** The party's band, with computed_at, staleness and coverage; never reasons. */
  retrieve(partyExternalId: string, options?: RequestOptions): Promise<WithResponse<Api.Posture>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/posture/parties/${partyExternalId}`, expect: [200], options });
  }
}

export class Graph {
  constructor(private readonly http: HttpClient) {}

  /** The party's network to a depth, as nodes and edges to draw. */
  network(partyExternalId: string, query: Api.GraphPartiesNetworkQuery = {}, options?: RequestOptions): Promise<WithResponse<Api.GraphNetwork>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/graph/parties/${partyExternalId}/network`, query, expect: [200], options });
  }

  /** Shortest paths between two parties. */
  paths(query: Api.GraphPathsQuery, options?: RequestOptions): Promise<WithResponse<Api.GraphPaths>> {
    return this.http.json({ method: 'GET', path: '/v1/graph/paths', query, expect: [200], options });
  }
}
