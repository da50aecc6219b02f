import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CursorCodec } from './cursor.ts';
import { sendProblem } from './problem-reply.ts';

// Keyset pages of the list endpoints: limit 1-200 (default 50, pagingShape in query-schema.ts), a
// signed cursor bound to the list, the tenant and the filters, and the page body
// {data, has_more, next_cursor}.

// The position after which the page starts; false for a cursor this service did not issue for
// this list, tenant and these filters.
export function readCursor(cursors: CursorCodec, text: string | undefined, filters: Record<string, unknown>): { at: string; id: string } | undefined | false {
  if (text === undefined) return undefined;
  const payload = cursors.decode(text);
  const matches = payload && Object.entries(filters).every(([k, v]) => payload[k] === v) && typeof payload.o === 'string' && typeof payload.e === 'string';
  return matches ? { at: payload.o as string, id: payload.e as string } : false;
}

export function badCursor(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(request, reply, 'svc:request/invalid_parameter', {
    detail: 'the cursor is not one this service issued for this list and these filters',
    errors: [{ path: 'cursor', code: 'svc:request/invalid_parameter', message: 'malformed or altered cursor' }],
  });
}

// A whole export (a list's format=csv) takes no page parameters: one it would ignore is refused,
// so a caller asking for a page does not silently get everything. Read from the query as sent,
// since the parsed query has the default limit.
export function refusePaging(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const sent = new URLSearchParams(request.raw.url?.split('?')[1] ?? '');
  const given = ['cursor', 'limit'].filter((name) => sent.has(name));
  if (given.length === 0) return undefined;
  return sendProblem(request, reply, 'svc:request/invalid_parameter', {
    detail: 'the CSV holds every item: it takes no cursor or limit',
    errors: given.map((path) => ({ path, code: 'svc:request/invalid_parameter' as const, message: 'not taken with format=csv' })),
  });
}

export function page<R, V>(rows: R[], limit: number, view: (row: R) => V, cursorAfter: (last: R) => string) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  const hasMore = rows.length > limit;
  return { data: data.map(view), has_more: hasMore, ...(hasMore && last ? { next_cursor: cursorAfter(last) } : {}) };
}
