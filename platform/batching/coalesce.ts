// Defers `flush` to the end of the current event-loop turn, once however often it is requested.
// Requests whose bytes arrived in the same poll phase all reach their queue before it runs, so
// group writers (nonce claims, admissions and acceptance) send one statement per turn instead
// of one per request.
export function coalescing(flush: () => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  };
}
