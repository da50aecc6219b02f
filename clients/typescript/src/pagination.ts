import type { HttpClient, RequestOptions, WithResponse } from './http.ts';

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}

/**
 * A cursor-paged list. Iterate it with `for await` to get every item across pages (each page is
 * fetched when the previous one is used up), or use `pages()` / `firstPage()` for the pages.
 */
export class PageIterator<T, P extends Page<T> = Page<T>> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<WithResponse<P>>, private readonly startCursor?: string) {}

  /** The first page only (from the cursor given, if any). */
  firstPage(): Promise<WithResponse<P>> {
    return this.fetchPage(this.startCursor);
  }

  /** Every page in turn, following next_cursor while has_more. */
  async *pages(): AsyncGenerator<WithResponse<P>, void, undefined> {
    let cursor = this.startCursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (!page.has_more || !page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item, collected: for lists known to be small. Stops with an error past `max` items. */
  async toArray(max = 10_000): Promise<T[]> {
    const items: T[] = [];
    for await (const item of this) {
      if (items.length >= max) throw new RangeError(`more than ${max} items; iterate instead`);
      items.push(item);
    }
    return items;
  }
}

/** A list's filters, with the cursor of the page to start from (the first page when absent). */
export type Filters<Q> = Omit<Q, 'cursor'> & { cursor?: string };

/** A GET list endpoint as a PageIterator: the same filters on every page, the cursor advancing. */
export function pagedList<T, P extends Page<T>>(http: HttpClient, path: string, query: { cursor?: string }, options: RequestOptions | undefined): PageIterator<T, P> {
  const { cursor, ...filters } = query;
  return new PageIterator((next) => http.json<P>({ method: 'GET', path, query: { ...filters, cursor: next }, expect: [200], options }), cursor);
}
