/**
 * Where the dashboard is, and how it moves. In a browser that is the URL's hash (bookmarks and the
 * back button work). Inside a VS Code webview it cannot be: the webview's host script catches every
 * click on an `<a href="#…">` and only scrolls to an element with that id, so hash links do
 * nothing there. There the route lives in memory, links are caught before the host script sees
 * them, and the route is kept with vscode.setState, so that a panel that was hidden (its page
 * thrown away) or restored after a reload opens where the user left it.
 */
import { parseRoute, type Route } from './router.js';

export interface Navigator {
  /** The current route's hash form (`#/app/ID`). */
  readonly hash: string;
  go(hash: string): void;
  /** The page shows the current route now (called after it rendered it). */
  shown?(): void;
  /** Calls `fn` after each change; returns a function that stops it. */
  subscribe(fn: () => void): () => void;
}

export function currentRoute(nav: Navigator): Route {
  return parseRoute(nav.hash);
}

/** The web UI's: the location's hash. */
export class HashNavigator implements Navigator {
  get hash(): string {
    return location.hash || '#/';
  }
  go(hash: string): void {
    location.hash = hash;
  }
  subscribe(fn: () => void): () => void {
    addEventListener('hashchange', fn);
    return () => removeEventListener('hashchange', fn);
  }
}

/** What the panel keeps through vscode.setState (the webview serializer gets it back too). */
export interface PanelState {
  route?: string;
  /** The page's scroll position per route, so that coming back lands where the user was. */
  scroll?: Record<string, number>;
}

export interface StateApi {
  getState(): unknown;
  setState(state: PanelState): void;
}

const MAX_HASH = 2048;
const MAX_SCROLLS = 50;

/** The panel's: a route in memory, saved with the webview's state and told to the extension. */
export class MemoryNavigator implements Navigator {
  private current: string;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly api: StateApi,
    /** Called with each route once the page shows it (the extension hears it, and its tests). */
    private readonly report: (hash: string) => void,
  ) {
    const saved = readState(api.getState());
    this.current = saved.route ?? '#/';
  }

  get hash(): string {
    return this.current;
  }

  go(hash: string): void {
    const next = normalize(hash);
    if (next === this.current) return;
    this.current = next;
    this.save({ route: next });
    for (const fn of [...this.listeners]) fn();
  }

  shown(): void {
    this.report(this.current);
  }

  /** The saved scroll position of the current route. */
  scroll(): number {
    return readState(this.api.getState()).scroll?.[this.current] ?? 0;
  }

  rememberScroll(y: number): void {
    const s = readState(this.api.getState());
    const scroll = { ...s.scroll, [this.current]: Math.max(0, Math.round(y)) };
    const keys = Object.keys(scroll);
    if (keys.length > MAX_SCROLLS)
      for (const k of keys.slice(0, keys.length - MAX_SCROLLS)) delete scroll[k];
    this.save({ scroll });
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private save(patch: PanelState): void {
    this.api.setState({ ...readState(this.api.getState()), route: this.current, ...patch });
  }
}

function normalize(hash: string): string {
  const h = hash.startsWith('#') ? hash : `#${hash}`;
  return h.length > MAX_HASH ? '#/' : h;
}

/** A state saved by an older page, or none: only what is well formed is used. */
export function readState(raw: unknown): PanelState {
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const out: PanelState = {};
  if (typeof r.route === 'string' && r.route.startsWith('#') && r.route.length <= MAX_HASH)
    out.route = r.route;
  if (typeof r.scroll === 'object' && r.scroll !== null) {
    const scroll: Record<string, number> = {};
    for (const [k, v] of Object.entries(r.scroll as Record<string, unknown>))
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) scroll[k] = v;
    out.scroll = scroll;
  }
  return out;
}

/**
 * In the panel: a click on an in-page link (`href="#…"`) moves the navigator, and goes no further,
 * so the webview's host script (listening on the window) does not swallow it. Links elsewhere
 * (http…) are left to the host, which opens them outside.
 */
export function catchLinkClicks(doc: Document, nav: Navigator): () => void {
  const on = (e: MouseEvent) => {
    // With a modifier too: the panel has no second tab to open a link in.
    if (e.defaultPrevented || e.button !== 0) return;
    for (const el of e.composedPath()) {
      const a = el as HTMLAnchorElement;
      if (a.tagName?.toLowerCase() !== 'a') continue;
      const href = a.getAttribute('href');
      if (!href?.startsWith('#')) return;
      e.preventDefault();
      e.stopPropagation();
      nav.go(href);
      return;
    }
  };
  doc.addEventListener('click', on);
  return () => doc.removeEventListener('click', on);
}
