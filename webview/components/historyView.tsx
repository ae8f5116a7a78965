/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { DataSource } from '../data/DataSource.js';
import { NO_EXECUTOR_LOGS } from '../data/HistoryDataSource.js';
import { href, type Route } from '../router.js';
import type { ApplicationInfo } from '../status/sparkJson.js';
import { HistoryAppPage } from './HistoryAppPage.js';
import { HistoryListing } from './HistoryListing.js';
import { JobPage } from './JobPage.js';
import { StagePage } from './StagePage.js';

export interface HistoryApps {
  apps: ApplicationInfo[] | undefined;
  error: string | undefined;
}

/**
 * The history server's applications (`/api/v1/applications`: its listing, no log replayed), read
 * again at each route change, so that a page opened later sees what the server's last scan found;
 * nothing is asked between two moves.
 */
export function useHistoryApps(source: DataSource, enabled: boolean, route: Route): HistoryApps {
  const [r, setR] = useState<HistoryApps>({ apps: undefined, error: undefined });
  useEffect(() => {
    if (!enabled) return;
    let current = true;
    source.api('/applications').then(
      (apps) => current && setR({ apps: apps as ApplicationInfo[], error: undefined }),
      (err: Error) => current && setR((was) => ({ ...was, error: err.message })),
    );
    return () => {
      current = false;
    };
  }, [source, enabled, route]);
  return r;
}

/**
 * The pages of 'history' mode (Spark's HistoryServer): the listing at #/, and each application's
 * page, job pages and stage pages, the master's components over its replayed log. The master's
 * other routes (workers, drivers, a worker, a process's log) have nothing behind them here.
 */
export function historyView(
  route: Route,
  { apps, error }: HistoryApps,
): { title: string; body: ComponentChildren } {
  const nameOf = (id: string) => apps?.find((a) => a.id === id)?.name ?? id;
  switch (route.name) {
    case 'overview':
    case 'apps':
      return {
        title: 'History Server',
        body: (
          <HistoryListing
            apps={apps}
            error={error}
            showIncomplete={route.name === 'overview' && route.showIncomplete === true}
          />
        ),
      };
    case 'app': {
      const app = apps?.find((a) => a.id === route.id);
      if (apps && !app)
        return {
          title: `Application ${route.id}`,
          body: (
            <p role="status">
              {`No event log of application ${route.id} is listed by this history server. `}
              <a href={href({ name: 'overview' })}>Back to the applications</a>
            </p>
          ),
        };
      return {
        title: app ? `Application: ${app.name}` : `Application ${route.id}`,
        body: <HistoryAppPage appId={route.id} app={app} />,
      };
    }
    case 'job':
      return {
        title: `Job ${route.jobId} of ${nameOf(route.appId)}`,
        body: <JobPage appId={route.appId} jobId={route.jobId} version="logged" />,
      };
    case 'stage':
      return {
        title: `Stage ${route.stageId} (attempt ${route.attemptId}) of ${nameOf(route.appId)}`,
        body: (
          <StagePage
            appId={route.appId}
            stageId={route.stageId}
            attemptId={route.attemptId}
            version="logged"
          />
        ),
      };
    case 'log':
      return {
        title: 'No logs here',
        body: (
          <>
            <p role="status">{NO_EXECUTOR_LOGS}</p>
            {route.source.appId !== undefined && (
              <p class="crumbs">
                <a href={href({ name: 'app', id: route.source.appId })}>
                  Back to application {route.source.appId}
                </a>
              </p>
            )}
          </>
        ),
      };
    default:
      return {
        title: 'Not found',
        body: (
          <p>
            {`A history server shows logged applications only: nothing is at ${route.name === 'notFound' ? route.hash : `#/${route.name}`}. `}
            <a href={href({ name: 'overview' })}>Back to the applications</a>
          </p>
        ),
      };
  }
}
