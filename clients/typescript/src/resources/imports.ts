import type * as Api from '../generated/api-types.ts';
import { pathOf, type HttpClient, type RequestOptions, type WithResponse } from '../http.ts';
import { pagedList, type Filters, type PageIterator } from '../pagination.ts';

// Historical imports (scope ingest): create with a mapping, stage the file as numbered chunks of
// whole records, submit; the service lands it and keeps a reject report.

export class Imports {
  constructor(private readonly http: HttpClient) {}

  /** Runs a mapping over a sample of a file: the reject report; nothing stored, no import created. */
  dryRunSample(request: Api.ImportDryRunRequest, options?: RequestOptions): Promise<WithResponse<Api.ImportDryRunReport>> {
    return this.http.json({ method: 'POST', path: '/v1/imports/dry-run', json: request, expect: [200], options });
  }

  create(request: Api.ImportCreateRequest, options?: RequestOptions): Promise<WithResponse<Api.Import>> {
    return this.http.json({ method: 'POST', path: '/v1/imports', json: request, expect: [201], options });
  }

  /** State and counts. */
  retrieve(importId: string, options?: RequestOptions): Promise<WithResponse<Api.Import>> {
    return this.http.json({ method: 'GET', path: pathOf`/v1/imports/${importId}`, expect: [200], options });
  }

  /**
   * Stages chunk `chunkNo` (0 starts the file): the raw bytes of whole records. Staging the same
   * chunk again replaces it, so pass `{ safeToRepeat: true }` to have failed uploads retried.
   */
  uploadChunk(importId: string, chunkNo: number, bytes: Uint8Array, options?: RequestOptions & { contentType?: string }): Promise<WithResponse<Api.ImportChunk>> {
    return this.http.json({
      method: 'PUT',
      path: pathOf`/v1/imports/${importId}/chunks/${chunkNo}`,
      body: bytes,
      contentType: options?.contentType ?? 'application/octet-stream',
      expect: [201],
      options,
    });
  }

  /** The whole-file dry-run over the staged chunks: the reject report, nothing stored. */
  dryRun(importId: string, options?: RequestOptions): Promise<WithResponse<Api.ImportDryRunReport>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/imports/${importId}/dry-run`, expect: [200], options });
  }

  /** Closes the upload (chunks 0 .. chunk_count-1) and queues the import for landing. */
  submit(importId: string, request: Api.ImportSubmitRequest, options?: RequestOptions): Promise<WithResponse<Api.Import>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/imports/${importId}/submit`, json: request, expect: [202], options });
  }

  /** Cancels an import not yet landing. */
  cancel(importId: string, options?: RequestOptions): Promise<WithResponse<Api.Import>> {
    return this.http.json({ method: 'POST', path: pathOf`/v1/imports/${importId}/cancel`, expect: [200], options });
  }

  /** The reject report as JSON pages, in row order, across every page. */
  rejects(importId: string, query: Filters<Omit<Api.ImportsRejectsQuery, 'format'>> = {}, options?: RequestOptions): PageIterator<Api.ImportReject, Api.ImportRejectPage> {
    return pagedList(this.http, pathOf`/v1/imports/${importId}/rejects`, { ...query, format: 'json' } as { cursor?: string }, options);
  }

  /**
   * The reject report as CSV (header row_no,chunk_no,code,object_type,external_id,message,raw),
   * streamed: the body is not read, so a large report never sits in memory. `timeoutMs` bounds
   * the wait for the response's headers; the stream then goes at the reader's pace, and `signal`
   * still cancels it.
   */
  async rejectsCsv(importId: string, options?: RequestOptions): Promise<ReadableStream<Uint8Array>> {
    const { response } = await this.http.raw({ method: 'GET', path: pathOf`/v1/imports/${importId}/rejects`, accept: 'text/csv', expect: [200], options });
    if (!response.body) throw new TypeError('the reject report has no body');
    return response.body;
  }
}
