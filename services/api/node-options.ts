// How far V8 lets the API's old generation grow past what the last full collection kept, in per
// cent, set when the API starts (V8 reads this flag at every collection, so no start-up option is
// needed; detection does the same, pipelines/detect/node-options.ts). Left alone, V8 sizes that
// growth from its heap limit, a quarter of the machine's memory. The API keeps a small live heap
// (a batch of 1000 events parses to well under a megabyte) but allocates fast and holds each
// request's garbage across its database round trips, so much of it is promoted; under batches the
// process sat at about twice its resting size. Sixty per cent holds it near its resting size plus
// the batches in flight, for more full collections, each short as the live heap is small
// (figures: docs/benchmarks.md, "bench:ingest: the batch regression, cost per event and RSS";
// decision 0047).
import v8 from 'node:v8';

const API_HEAP_GROWING_PERCENT = 60;

export function limitApiHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`);
}
