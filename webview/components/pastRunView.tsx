/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { StoreState } from '../data/store.js';
import type { PastRunBrief } from '../protocol.js';
import { href, type Route } from '../router.js';
import type { ApplicationInfo } from '../status/sparkJson.js';
import { useApi } from '../status/useApi.js';
import { Section, StateBadge, Table } from './common.js';
import { HistoryAppPage } from './HistoryAppPage.js';
import { JobPage } from './JobPage.js';
import { StagePage } from './StagePage.js';

/**
 * In VS Code, the pages of a run of an earlier local cluster (before a reload or a restart): the
 * history server's pages (HistoryAppPage, JobPage, StagePage over `/api/v1`), which the agent
 * answers from the run's event log whatever master the window is connected to now, or with none.
 * An application the master lists is the master's, even when a past run had its id.
 */
export function pastRunOf(route: Route, state: StoreState): PastRunBrief | undefined {
  const appId =
    route.name === 'app'
      ? route.id
      : route.name === 'job' || route.name === 'stage'
        ? route.appId
        : undefined;
  if (appId === undefined) return undefined;
  const m = state.master;
  if (m && [...m.activeApps, ...m.completedApps].some((a) => a.id === appId)) return undefined;
  return state.pastRuns.find((r) => r.appId === appId);
}

export function pastRunView(
  route: Route,
  run: PastRunBrief,
): { title: string; body: ComponentChildren } {
  switch (route.name) {
    case 'job':
      return {
        title: `Job ${route.jobId} of ${run.name}`,
        body: <JobPage appId={run.appId} jobId={route.jobId} version="logged" />,
      };
    case 'stage':
      return {
        title: `Stage ${route.stageId} (attempt ${route.attemptId}) of ${run.name}`,
        body: (
          <StagePage
            appId={run.appId}
            stageId={route.stageId}
            attemptId={route.attemptId}
            version="logged"
          />
        ),
      };
    default:
      return { title: `Application: ${run.name}`, body: <PastRunAppPage run={run} /> };
  }
}

function PastRunAppPage({ run }: { run: PastRunBrief }) {
  const app = useApi<ApplicationInfo>(`/applications/${encodeURIComponent(run.appId)}`, 'logged');
  return (
    <>
      <p class="muted" role="note">
        {`A run of an earlier session's local cluster (${run.state}): its pages are read from its event log.`}
      </p>
      <HistoryAppPage appId={run.appId} app={app.data} back={href({ name: 'apps' })} />
    </>
  );
}

/**
 * The Applications page's last section in VS Code: the runs of earlier local clusters, each a
 * link to its pages (from its event log), as the Applications view lists them under Completed.
 */
export function PastRunsSection({ runs }: { runs: readonly PastRunBrief[] }) {
  if (runs.length === 0) return null;
  return (
    <Section id="past-runs" title="Earlier Sessions" count={runs.length}>
      <Table
        caption="Runs of earlier local clusters, read from their event logs"
        headers={['Application ID', 'Name', 'State']}
        empty=""
        rows={runs.map((r) => (
          <tr key={r.appId}>
            <td>
              <a href={href({ name: 'app', id: r.appId })}>{r.appId}</a>
            </td>
            <td>{r.name}</td>
            <td>
              <StateBadge state={r.state} />
            </td>
          </tr>
        ))}
      />
    </Section>
  );
}
