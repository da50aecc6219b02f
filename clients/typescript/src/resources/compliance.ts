import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Alerts, episodes and case actions: restricted AML content (scope compliance).


export class Alerts {
  constructor(private readonly http: HttpClient) {}

  /** Alerts, newest first, across every page. */
  list(query: Filters<Api.AlertsQuery> = {}, options?: RequestOptions): PageIterator<Api.Alert, Api.AlertPage> {
    return pagedList(this.http, '/v1/alerts', query, options);
  }

  /** An alert with every evidence entry. */
  retrieve(alertId: string, options?: RequestOptions): Promise<WithResponse<Api.AlertDetail>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/alerts/${alertId}`, expect: [200], options });
  }
}

export class Episodes {
  constructor(private readonly http: HttpClient) {}

  /** Episodes, newest first, across every page (`since`: changed at or after). */
  list(query: Filters<Api.EpisodesQuery> = {}, options?: RequestOptions): PageIterator<Api.Episode, Api.EpisodePage> {
    return pagedList(this.http, '/v1/episodes', query, options);
  }

  /** An episode with its alerts and case history. */
  retrieve(episodeId: string, options?: RequestOptions): Promise<WithResponse<Api.EpisodeDetail>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/episodes/${episodeId}`, expect: [200], options });
  }

  /** Sets the case status and/or disposition (a disposition needs a reason). */
  updateCase(episodeId: string, action: Api.CaseActionRequest, options?: RequestOptions): Promise<WithResponse<Api.EpisodeDetail>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/episodes/${episodeId}/case`, json: action, expect: [200], options });
  }
}
