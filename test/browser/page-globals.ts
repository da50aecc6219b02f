import type cytoscape from 'cytoscape';

// What code passed to page.evaluate reads in the console's page, typed for this Node program
// (which has no DOM types): the state the console publishes on its window for tests
// (console/web/src/views/network.ts and paths.ts, console/web/src/graph.ts summarise) and the
// Cytoscape instance its container holds. Read as `(globalThis as ConsolePage).__svcNetwork`.

interface GraphSummary {
  nodes: Array<{ id: string; kind: string; label: string; open_alerts: number; degree: number }>;
  edges: Array<{ id: string; source: string; target: string; type: string; label: string; parts: string[]; count: number; total: string }>;
}

interface NetworkState extends GraphSummary {
  ready: boolean;
  center: string;
  focus: string | null;
  cited?: string[];
  query: string;
  renderedAtMs: number | null;
}

interface PathsState extends GraphSummary {
  ready: boolean;
  from: string;
  to: string;
  paths: Array<{ length: number; hops: Array<{ from: string; to: string; type: string; forward: boolean; amount: string; dates: string }> }>;
}

// The graph's container: Cytoscape registers its instance on it.
interface CytoscapeContainer {
  _cyreg: { cy: cytoscape.Core };
  getBoundingClientRect(): { left: number; top: number };
}

export type ConsolePage = typeof globalThis & {
  __svcNetwork?: NetworkState;
  __svcPaths?: PathsState;
  document: { getElementById(id: 'cy'): CytoscapeContainer };
};
