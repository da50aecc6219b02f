// A failure in one line, for an operator: the innermost cause a driver wrapped (the socket error
// says most) with its code when the text does not say it (57P01, ServiceUnavailable, …),
// credentials in URLs removed, at most 300 characters. Used where an engine's failure is reported
// (probes, retried work, a request answered 503) instead of a driver's stack trace.
export function describeFailure(error: unknown): string {
  let innermost = error as { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; depth < 5; depth++) {
    const next = innermost?.cause ?? (Array.isArray(innermost?.errors) ? innermost.errors[0] : undefined);
    if (!next || typeof next !== 'object') break;
    innermost = next as typeof innermost;
  }
  let text = typeof innermost?.message === 'string' && innermost.message !== '' ? innermost.message : String(error);
  // neo4j-driver puts its cause in the text: "… Caused by: connect ECONNREFUSED …".
  text = text.includes('Caused by: ') ? text.slice(text.lastIndexOf('Caused by: ') + 'Caused by: '.length) : text;
  const code = innermost?.code;
  if (typeof code === 'string' && code !== '' && !text.includes(code)) text = `${text} (${code})`;
  return text.replace(/\/\/[^/\s@]*@/g, '//').replace(/\s+/g, ' ').trim().slice(0, 300);
}
