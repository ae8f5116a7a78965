/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { DataSource } from '../data/DataSource.js';
import type { DashboardStore, StoreState } from '../data/store.js';
import { catchLinkClicks, MemoryNavigator, type Navigator } from '../navigation.js';
import type { DashboardConfig } from '../protocol.js';
import { href, parseRoute, type Route } from '../router.js';
import { appVersion } from '../status/useApi.js';
import { AppPage } from './AppPage.js';
import { AppStatusSections } from './AppStatusSections.js';
import { type DashboardContext, DashboardCtx } from './context.js';
import { historyView, useHistoryApps } from './historyView.js';
import { JobPage } from './JobPage.js';
import { LogViewer, logTitle } from './LogViewer.js';
import { AppsSections, DriversSections, Overview, WorkersSection } from './Overview.js';
import { PastRunsSection, pastRunOf, pastRunView } from './pastRunView.js';
import { StagePage } from './StagePage.js';
import { WorkerPage } from './WorkerPage.js';

/**
 * The dashboard: a header with the navigation, one view per hash route, and a polite live region.
 * On a route change the focus moves to the new view's heading, as a screen reader user expects
 * after following a link.
 */
export function App({
  store,
  source,
  config,
  nav,
}: {
  store: DashboardStore;
  source: DataSource;
  config: DashboardConfig;
  nav: Navigator;
}) {
  const state = useStore(store);
  const route = useRoute(nav);
  useScrollMemory(nav, route, state.master !== undefined);
  const now = useClock();
  const [message, setMessage] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);

  useEffect(() => store.connect(source), [store, source]);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    heading.current?.focus();
  }, [route]);

  const announce = useCallback((m: string) => setMessage(m), []);
  const ctx: DashboardContext = useMemo(
    () => ({ source, capabilities: state.capabilities, config, now, announce }),
    [source, state.capabilities, config, now, announce],
  );
  const history = useHistoryApps(source, config.mode === 'history', route);
  const { title, body } =
    config.mode === 'history' ? historyView(route, history) : view(route, state, config);
  useEffect(() => {
    document.title = `${title} · Wick`;
  }, [title]);
  useEffect(() => nav.shown?.(), [nav, route]);

  return (
    <DashboardCtx.Provider value={ctx}>
      <button type="button" class="skip-link" onClick={() => heading.current?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <span class="brand" aria-hidden="true">
          Wick
        </span>
        <nav aria-label="Dashboard">
          <ul>
            {(config.mode === 'master'
              ? ([
                  ['overview', 'Overview'],
                  ['workers', 'Workers'],
                  ['apps', 'Applications'],
                  ['drivers', 'Drivers'],
                ] as const)
              : config.mode === 'history'
                ? ([['overview', 'Applications']] as const)
                : ([['overview', 'Worker']] as const)
            ).map(([name, label]) => (
              <li key={name}>
                <a href={href({ name })} aria-current={route.name === name ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        {config.mode === 'history' ? (
          // Nothing live: each page is read from its event log when it opens.
          <span class="conn conn-history">History Server</span>
        ) : (
          <span class={`conn ${state.connected ? 'conn-up' : 'conn-down'}`} role="status">
            {state.connected ? 'Live' : (state.connectionMessage ?? 'Connecting…')}
          </span>
        )}
      </header>
      <main id="main">
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {body}
      </main>
      <div class="sr-only" aria-live="polite" role="status">
        {message}
      </div>
    </DashboardCtx.Provider>
  );
}

function view(
  route: Route,
  state: StoreState,
  config: DashboardConfig,
): { title: string; body: ComponentChildren } {
  if (route.name === 'log') {
    const { appId } = route.source;
    return {
      title: logTitle(route.source),
      body: (
        <>
          {config.mode === 'master' && appId !== undefined && (
            <p class="crumbs">
              <a href={href({ name: 'app', id: appId })}>Back to application {appId}</a>
            </p>
          )}
          {config.mode === 'worker' && (
            <p class="crumbs">
              <a href="#/">Back to the worker</a>
            </p>
          )}
          <LogViewer source={route.source} />
        </>
      ),
    };
  }
  if (config.mode === 'worker') {
    if (route.name === 'overview' || (route.name === 'worker' && route.id === config.workerId)) {
      return {
        title: `Worker ${config.workerId ?? ''}`.trim(),
        body: <WorkerPage workerId={undefined} summary={undefined} version={state.workerVersion} />,
      };
    }
    return notFound(route);
  }
  // A run of an earlier local cluster: from its event log, with or without a master.
  const past = pastRunOf(route, state);
  if (past) return pastRunView(route, past);
  const m = state.master;
  if (!m)
    return {
      title: 'Connecting to the master…',
      body: <vscode-progress-ring aria-label="Loading" />,
    };
  switch (route.name) {
    case 'overview':
      return {
        title: `Wick Master at ${m.url}`,
        body: <Overview state={m} utilization={state.utilization} />,
      };
    case 'workers':
      return { title: 'Workers', body: <WorkersSection state={m} /> };
    case 'apps':
      return {
        title: 'Applications',
        body: (
          <>
            <AppsSections state={m} />
            {/* Earlier local clusters' runs (VS Code), less any the master lists. */}
            <PastRunsSection
              runs={state.pastRuns.filter((r) => pastRunOf({ name: 'app', id: r.appId }, state))}
            />
          </>
        ),
      };
    case 'drivers':
      return { title: 'Drivers', body: <DriversSections state={m} /> };
    case 'app': {
      const app = [...m.activeApps, ...m.completedApps].find((a) => a.id === route.id);
      return app
        ? {
            title: `Application: ${app.name}`,
            body: (
              <>
                <AppPage app={app} />
                <AppStatusSections appId={app.id} version={appVersion(app)} />
              </>
            ),
          }
        : {
            // Gone from the master's list: its jobs may still be read from its event log.
            title: `Application ${route.id}`,
            body: (
              <>
                <p class="muted">
                  The master no longer lists this application; what its event log kept follows.
                </p>
                <AppStatusSections appId={route.id} version="logged" />
              </>
            ),
          };
    }
    case 'job': {
      const app = [...m.activeApps, ...m.completedApps].find((a) => a.id === route.appId);
      return {
        title: `Job ${route.jobId} of ${app?.name ?? route.appId}`,
        body: <JobPage appId={route.appId} jobId={route.jobId} version={appVersion(app)} />,
      };
    }
    case 'stage': {
      const app = [...m.activeApps, ...m.completedApps].find((a) => a.id === route.appId);
      return {
        title: `Stage ${route.stageId} (attempt ${route.attemptId}) of ${app?.name ?? route.appId}`,
        body: (
          <StagePage
            appId={route.appId}
            stageId={route.stageId}
            attemptId={route.attemptId}
            version={appVersion(app)}
          />
        ),
      };
    }
    case 'worker': {
      const w = m.workers.find((x) => x.id === route.id);
      return w
        ? { title: `Worker ${w.id}`, body: <WorkerPage workerId={w.id} summary={w} version={w} /> }
        : { title: 'Unknown worker', body: <p>No worker {route.id} is known to this master.</p> };
    }
    case 'notFound':
      return notFound(route);
  }
}

function notFound(route: Route): { title: string; body: ComponentChildren } {
  return {
    title: 'Not found',
    body: (
      <p>
        Nothing is at {route.name === 'notFound' ? route.hash : route.name}.{' '}
        <a href="#/">Back to the overview</a>
      </p>
    ),
  };
}

function useStore(store: DashboardStore): StoreState {
  const [state, setState] = useState(store.state);
  useEffect(() => {
    setState(store.state);
    return store.subscribe(() => setState(store.state));
  }, [store]);
  return state;
}

function useRoute(nav: Navigator): Route {
  const [route, setRoute] = useState(() => parseRoute(nav.hash));
  useEffect(() => {
    const off = nav.subscribe(() => setRoute(parseRoute(nav.hash)));
    const unclick = nav instanceof MemoryNavigator ? catchLinkClicks(document, nav) : () => {};
    return () => {
      off();
      unclick();
    };
  }, [nav]);
  return route;
}

/**
 * In the panel: each route's scroll position is kept, and given back when the route shows again
 * (also after the panel was hidden, once the state is there to lay the page out).
 */
function useScrollMemory(nav: Navigator, route: Route, loaded: boolean): void {
  useEffect(() => {
    if (!(nav instanceof MemoryNavigator)) return;
    let frame = 0;
    const on = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        nav.rememberScroll(scrollY);
      });
    };
    addEventListener('scroll', on, { passive: true });
    return () => {
      removeEventListener('scroll', on);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [nav]);
  useEffect(() => {
    if (nav instanceof MemoryNavigator && loaded) scrollTo(0, nav.scroll());
  }, [nav, route, loaded]);
}

/**
 * The display clock: durations of running applications and the chart's window move with it. It
 * fetches nothing (every datum is pushed); it only re-renders, once a second, while the page is
 * visible.
 */
function useClock(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const sync = () => {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      if (document.visibilityState === 'visible') {
        setNow(Date.now());
        timer = setInterval(() => setNow(Date.now()), 1000);
      }
    };
    sync();
    document.addEventListener('visibilitychange', sync);
    return () => {
      document.removeEventListener('visibilitychange', sync);
      if (timer !== undefined) clearInterval(timer);
    };
  }, []);
  return now;
}
