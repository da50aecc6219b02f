// Node options for a process that runs detection: `svc run pipeline detect`, and `svc up`, which
// runs every part in one process. They are given where such a process is started (`npm start`,
// the compose and Kubernetes detect processes, the benches), since V8 sizes its heap when it
// starts and a running process cannot change it.
//
// Semi-spaces of 64 MB in V8's young generation instead of the default 16. An evaluation holds its
// subject's reads across database round trips; with the default, scavenges came so often that many
// of those reads outlived two of them and were copied into the old generation, and scavenging took
// a large share of the detect process's time. The larger young generation costs some peak memory
// for less CPU (figures: docs/benchmarks.md, bench:detect; decision 0009).
import v8 from 'node:v8';

export const DETECTION_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=64'];

// How far V8 lets the old generation grow past what the last full collection kept, in per cent,
// set when detection starts (V8 reads this flag at every collection, so no start-up option is
// needed). Left alone, V8 sizes that growth from its heap limit, a quarter of the machine's
// memory: on a large machine up to four times the live heap. Detection keeps a modest live heap
// (the snapshot cache, the batches in flight) but promotes a steady stream of evaluation data
// that dies soon after, so the process sat at several times its live heap between collections.
// About a third more keeps the old generation near one and a third times the live heap (plus what is
// allocated while a collection marks), for more full collections, each as short as the live heap
// is small (docs/decisions/0040-detect-memory.md).
const DETECTION_HEAP_GROWING_PERCENT = 35;

export function limitHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${DETECTION_HEAP_GROWING_PERCENT}`);
}
