/**
 * The dashboard's components rendered in Node with given state (preact-render-to-string): what
 * each view shows, its links, and what it offers to screen readers. No browser: effects (the
 * chart, the fetches) do not run here; the browser tests cover them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ComponentChildren, h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { AppPage } from '../../webview/components/AppPage.js';
import { type DashboardContext, DashboardCtx } from '../../webview/components/context.js';
import { KillButton } from '../../webview/components/KillButton.js';
import { LogViewer } from '../../webview/components/LogViewer.js';
import { ClusterSummary, Overview } from '../../webview/components/Overview.js';
import { UtilizationChart } from '../../webview/components/UtilizationChart.js';
import { WorkerView } from '../../webview/components/WorkerPage.js';
import { DashboardStore } from '../../webview/data/store.js';
import type { WorkerState } from '../../webview/protocol.js';
import { href, parseRoute } from '../../webview/router.js';
import { app, masterState, T0, worker } from './fixtures/states.js';

function render(node: ComponentChildren, ctx: Partial<DashboardContext> = {}): string {
  const value: DashboardContext = {
    source: undefined,
    capabilities: { killEnabled: true },
    config: { mode: 'master', host: 'web' },
    now: T0 + 90_000,
    announce: () => {},
    ...ctx,
  };
  return renderToString(h(DashboardCtx.Provider, { value }, node));
}

/** The text of an HTML fragment, tags dropped, entities of this test's data decoded. */
function text(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

test('the cluster summary counts only ALIVE workers, as Spark does', () => {
  const t = text(render(h(ClusterSummary, { state: masterState() })));
  assert.match(t, /Status ALIVE/);
  assert.match(t, /Alive Workers 1 /);
  assert.match(t, /Cores in use 2 Used of 4 Total/);
  assert.match(t, /Memory in use 1\.0 GiB Used of 4\.0 GiB Total/);
  assert.match(t, /Applications 2 Running, 1 Completed/);
  assert.match(t, /Drivers 1 Running, 1 Completed/);
});

test('the cluster summary lists every master with its state, and no Masters item with one master', () => {
  assert.doesNotMatch(text(render(h(ClusterSummary, { state: masterState() }))), /Masters/);
  const state = {
    ...masterState(),
    masters: [
      { url: 'wick://127.0.0.1:7077', status: 'ALIVE' as const },
      { url: 'wick://127.0.0.1:7078', status: 'STANDBY' as const },
    ],
  };
  const html = render(h(ClusterSummary, { state }));
  assert.match(
    text(html),
    /Masters wick:\/\/127\.0\.0\.1:7077 ALIVE wick:\/\/127\.0\.0\.1:7078 STANDBY/,
  );
  assert.match(html, /aria-label="Masters"/);
});

test('the overview lists workers, running, waiting and completed applications, and drivers', () => {
  const html = render(h(Overview, { state: masterState(), utilization: [] }));
  const t = text(html);
  for (const heading of [
    'Workers',
    'Running Applications',
    'Waiting Applications',
    'Completed Applications',
    'Running Drivers',
    'Completed Drivers',
  ]) {
    assert.match(html, new RegExp(`<h2[^>]*>${heading}`), `no section ${heading}`);
  }
  // Links to the pages of workers and applications.
  assert.match(html, /href="#\/worker\/worker-20261130120000-127\.0\.0\.1-40001"/);
  assert.match(html, /href="#\/app\/app-20261130120000-0000"/);
  // A waiting application says why.
  assert.match(t, /WAITING No worker has 64\.0 GiB of memory free/);
  // Durations: a running one from the display clock, a finished one from its end.
  assert.match(t, /1\.5 min/);
  assert.match(t, /Done .*FINISHED 1\.0 min/);
  // A driver's logs, its exception, and kill buttons only for what still runs.
  assert.match(html, /href="#\/log\?driverId=driver-20261130120000-0000&amp;logType=stdout"/);
  assert.match(t, /FAILED Error: boom/);
  assert.equal((html.match(/aria-label="Kill application /g) ?? []).length, 2);
  assert.equal((html.match(/aria-label="Kill driver /g) ?? []).length, 1);
  // Tables carry captions and column headers for screen readers; the chart is described.
  assert.match(html, /<caption class="sr-only">Workers<\/caption>/);
  assert.match(html, /<th scope="col">Worker Id<\/th>/);
  assert.match(html, /role="img" aria-label="Cluster utilization: no data yet\."/);
});

test('the chart in words: the values now and the peak over the window', () => {
  const sample = (time: number, coresUsed: number, memoryUsed: number) => ({
    time,
    cores: 4,
    coresUsed,
    memory: 4096,
    memoryUsed,
  });
  const html = render(
    h(UtilizationChart, {
      samples: [sample(T0, 0, 0), sample(T0 + 1000, 4, 1024), sample(T0 + 5000, 0, 0)],
      now: T0 + 90_000,
    }),
  );
  assert.match(
    html,
    /aria-label="Cluster utilization over the last 15 minutes\. Now: 0 of 4 cores and 0\.0 MiB of 4\.0 GiB in use\. Peak: 4 cores and 1\.0 GiB\."/,
  );
});

test('kill buttons are not offered when the host does not allow kills', () => {
  const html = render(h(Overview, { state: masterState(), utilization: [] }), {
    capabilities: { killEnabled: false },
  });
  assert.doesNotMatch(html, /Kill/);
  assert.doesNotMatch(html, /<th scope="col">Actions/);
});

test('the kill dialog asks to confirm, never for the secret (the page is logged in already)', () => {
  const target = { kind: 'app', id: 'app-1' } as const;
  const html = render(h(KillButton, { target, label: 'app-1' }));
  assert.match(html, /<dialog[^>]*aria-labelledby/);
  assert.match(html, /Kill application app-1\?/);
  assert.doesNotMatch(html, /type="password"|Secret/);
});

test('an application page shows executors, removed ones, and every state change with exit codes and reasons', () => {
  const html = render(h(AppPage, { app: app() }));
  const t = text(html);
  assert.match(t, /Executors 1 /);
  assert.match(t, /Removed Executors 1 /);
  assert.match(t, /FAILED 137 Command exited with code 137/);
  assert.match(
    html,
    /href="#\/log\?appId=app-20261130120000-0000&amp;executorId=1&amp;logType=stderr"/,
  );
  const history = t.slice(t.indexOf('Executor State History'));
  // Oldest first, across executors.
  assert.ok(
    history.indexOf('LAUNCHING') < history.indexOf('FAILED') &&
      history.indexOf('FAILED') < history.indexOf('RUNNING'),
    history,
  );
});

test("a FAILED application's page says what its driver said, and the user's line", () => {
  const html = render(
    h(AppPage, {
      app: app({
        state: 'FAILED',
        endTime: T0 + 5000,
        failure: {
          message: 'TypeError: the report has nowhere to go',
          location: { file: '/home/me/job.ts', line: 12, column: 11 },
        },
      }),
    }),
  );
  assert.match(text(html), /Failed because TypeError: the report has nowhere to go/);
  assert.match(text(html), /at \/home\/me\/job\.ts:12:11/);
});

test('an application page quotes the last executor failure, line by line', () => {
  const message =
    'Command exited with code 1\nThe end of its stderr:\nconnection refused — is wick.driver.host reachable from the worker hosts?';
  const html = render(
    h(AppPage, {
      app: app({
        lastExecutorFailure: { execId: 4, workerHostPort: '10.0.0.11:4000', time: T0, message },
      }),
    }),
  );
  assert.match(text(html), /Last executor failure Executor 4 on 10\.0\.0\.11:4000/);
  assert.match(
    html,
    /<pre class="failure">Command exited with code 1\nThe end of its stderr:\nconnection refused — is wick\.driver\.host/,
  );
});

test('a worker page lists running and finished executors and drivers with their logs', () => {
  const detail: WorkerState = {
    type: 'WorkerStateResponse',
    host: '127.0.0.1',
    port: 40001,
    workerId: 'worker-20261130120000-127.0.0.1-40001',
    masterUrl: 'wick://127.0.0.1:7077',
    masterWebUiUrl: 'http://127.0.0.1:8080',
    cores: 4,
    memory: 4096,
    coresUsed: 2,
    memoryUsed: 1024,
    workDir: '/srv/work',
    executors: [
      {
        appId: 'app-1',
        execId: 0,
        cores: 2,
        memory: 1024,
        state: 'RUNNING',
        pid: 42,
        dir: '/srv/work/app-1/0',
      },
    ],
    finishedExecutors: [
      {
        appId: 'app-0',
        execId: 3,
        cores: 1,
        memory: 512,
        state: 'EXITED',
        exitCode: 1,
        message: 'exit 1',
        dir: '/srv/work/app-0/3',
      },
    ],
    drivers: [],
    finishedDrivers: [
      { driverId: 'driver-9', cores: 1, memory: 512, state: 'FINISHED', dir: '/srv/work/driver-9' },
    ],
  };
  const html = render(h(WorkerView, { summary: worker(), detail }));
  const t = text(html);
  assert.match(t, /Master URL wick:\/\/127\.0\.0\.1:7077/);
  assert.match(t, /Running Executors 1 /);
  assert.match(t, /Finished Executors 1 .*EXITED .*1 exit 1/);
  assert.match(html, /href="#\/log\?driverId=driver-9&amp;logType=stdout"/);
  // On a worker's own page there are no application pages to link to.
  const own = render(h(WorkerView, { summary: undefined, detail }), {
    config: { mode: 'worker', host: 'web', workerId: detail.workerId },
  });
  assert.doesNotMatch(own, /href="#\/app\//);
});

test('the log viewer offers Spark-style paging and a follow toggle, labelled', () => {
  const html = render(
    h(LogViewer, { source: { appId: 'app-1', executorId: 0, logType: 'stdout' } }),
  );
  assert.match(html, /role="toolbar"/);
  for (const b of ['Load more', 'Load new', 'Follow']) assert.match(html, new RegExp(`>${b}<`));
  assert.match(html, /aria-pressed="false"/);
  assert.match(html, /<pre[^>]*aria-label="stdout of executor 0 of app-1"/);
});

test('hash routes round-trip, and a log route needs a complete source', () => {
  for (const hash of ['#/', '#/workers', '#/apps', '#/drivers', '#/app/app-1', '#/worker/w%2F1']) {
    assert.equal(href(parseRoute(hash)), hash);
  }
  assert.deepEqual(parseRoute('#/log?appId=app-1&executorId=2&logType=stderr'), {
    name: 'log',
    source: { appId: 'app-1', executorId: 2, logType: 'stderr' },
  });
  assert.deepEqual(parseRoute('#/log?driverId=driver-1'), {
    name: 'log',
    source: { driverId: 'driver-1', logType: 'stdout' },
  });
  for (const bad of [
    '#/log?appId=app-1',
    '#/log?appId=a&executorId=-1',
    '#/log?driverId=d&appId=a&executorId=1',
    '#/log?driverId=d&logType=passwd',
    '#/nope',
    '#/app/a/b',
  ]) {
    assert.equal(parseRoute(bad).name, 'notFound', bad);
  }
});

test('the store applies pushed changes in order and samples the chart on change only', () => {
  let now = T0;
  const store = new DashboardStore(() => now);
  const seen: number[] = [];
  store.subscribe(() => seen.push(store.state.master?.seq ?? -1));
  store.snapshot({
    state: masterState(),
    utilization: [],
    capabilities: { killEnabled: true },
  });
  assert.equal(store.state.utilization.length, 1);
  const before = store.state.master;
  now += 1000;
  // A change that moves the totals adds a sample; the state object is new, the old one intact.
  store.change({ type: 'MasterStateEvent', seq: 4, workers: [worker({ coresUsed: 4 })] });
  assert.notEqual(store.state.master, before);
  assert.equal(before?.workers[0]?.coresUsed, 2);
  assert.equal(store.state.master?.workers[0]?.coresUsed, 4);
  assert.deepEqual(
    store.state.utilization.map((s) => s.coresUsed),
    [2, 4],
  );
  // One that does not (a heartbeat) adds none; an old one (seq ≤ current) is ignored.
  store.change({
    type: 'MasterStateEvent',
    seq: 5,
    workers: [worker({ coresUsed: 4, lastHeartbeat: T0 + 5 })],
  });
  store.change({ type: 'MasterStateEvent', seq: 5, removedWorkers: [worker().id] });
  assert.equal(store.state.utilization.length, 2);
  assert.equal(store.state.master?.workers.length, 2);
  // An application that finishes moves to the completed ones.
  store.change({
    type: 'MasterStateEvent',
    seq: 6,
    apps: [app({ state: 'FINISHED', endTime: T0 + 2000 })],
  });
  assert.deepEqual(store.state.master?.completedApps.map((a) => a.id).sort(), [
    'app-20261130110000-0009',
    'app-20261130120000-0000',
  ]);
  assert.deepEqual(seen, [3, 4, 5, 6]);
});
