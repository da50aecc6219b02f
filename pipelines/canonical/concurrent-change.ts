// A batch's status writes are conditional on the status its events were taken to have (pending,
// or held for a release): when fewer rows were written than events given, one of them had moved on
// meanwhile (processed by a redelivery, released beside the batch), and the batch's transaction
// must not commit. Thrown so that the caller rolls it back and takes the batch again, its rows
// locked first (processor.ts).
export class ConcurrentChange extends Error {
  constructor(what: string, expected: number, written: number) {
    super(`canonical: ${what}: ${written} of ${expected} events still had the status they were read with`);
    this.name = 'ConcurrentChange';
  }
}
