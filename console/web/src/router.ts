// A tiny router on the History API. Every screen has a URL under /console/ that can be shared.
import { restoreDrafts } from './drafts.ts';
export type Cleanup = () => void;
export type View = (params: string[], query: URLSearchParams) => Promise<Cleanup | void> | Cleanup | void;

const routes: Array<{ pattern: RegExp; view: View }> = [];
let cleanup: Cleanup | void;
let generation = 0;

export const route = (pattern: RegExp, view: View) => routes.push({ pattern, view });
// A view that finishes after the user moved on must not draw over the next one.
export const isCurrent = (gen: number) => gen === generation;
export const currentGeneration = () => generation;

export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  void render();
}

export async function render(): Promise<void> {
  generation += 1;
  const gen = generation;
  if (typeof cleanup === 'function') cleanup();
  cleanup = undefined;
  const path = location.pathname.replace(/\/+$/, '') || '/';
  for (const { pattern, view } of routes) {
    const m = pattern.exec(path);
    if (!m) continue;
    const params = m.slice(1).map((p) => pathSegment(p ?? ''));
    const result = await view(params, new URLSearchParams(location.search));
    if (gen === generation) restoreDrafts(location.pathname);
    if (gen === generation) cleanup = result;
    else if (typeof result === 'function') result();
    return;
  }
  navigate('/console/cases', { replace: true });
}

// A path segment as its view takes it: decoded, or as written when it is not valid percent-encoding
// (`%E0` alone), which the view then looks up and finds nothing under, rather than throwing
// before any view is drawn (a blank page).
export function pathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function startRouter(): void {
  window.addEventListener('popstate', () => void render());
  // Same-origin links under /console/ stay in the app; modified clicks open a tab as usual.
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/console/') || url.pathname.startsWith('/console/v1/')) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
}
