// Node options for a process that runs detection: `svc run pipeline detect`, and `svc up`, which
// runs every part in one process. They are given where such a process is started (`npm start`,
// the compose and Kubernetes detect processes, the benches), since V8 sizes its heap when it
// starts and a running process cannot change it.
//
// Semi-spaces of 64 MB in V8's young generation instead of the default 16. An evaluation holds its
// subject's reads across database round trips, and with 16 MB a scavenge came every 14 ms: many of
// those reads outlived two of them and were copied into the old generation (about 100 MB a
// second), and scavenges took a fifth of the detect process's time. With 64 MB, detection used
// about 5 % less CPU for the same work, for about 80 MB more peak memory
// (docs/decisions/0009-detection.md).
export const DETECTION_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=64'];
