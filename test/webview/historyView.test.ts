/**
 * The history server's pages rendered in Node (preact-render-to-string): the listing's completed
 * and incomplete views, the routes it takes, what the master's routes show there, and the
 * HistoryDataSource's answers for what a history server cannot do. Effects (the fetches) do not
 * run here; historyPages.test.ts covers them in Chromium.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ComponentChildren, h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { LogLinks } from '../../webview/components/common.js';
import { type DashboardContext, DashboardCtx } from '../../webview/components/context.js';
import { HistoryListing } from '../../webview/components/HistoryListing.js';
import { historyView } from '../../webview/components/historyView.js';
import { HistoryDataSource, NO_EXECUTOR_LOGS } from '../../webview/data/HistoryDataSource.js';
import { href, parseRoute } from '../../webview/router.js';
import type { ApplicationInfo } from '../../webview/status/sparkJson.js';

const T0 = Date.UTC(2026, 11, 7, 10);

function render(node: ComponentChildren, mode: 'history' | 'master' = 'history'): string {
  const value: DashboardContext = {
    source: undefined,
    capabilities: { killEnabled: false },
    config: { mode, host: 'web' },
    now: T0 + 90_000,
    announce: () => {},
  };
  return renderToString(h(DashboardCtx.Provider, { value }, node));
}

function info(id: string, completed: boolean): ApplicationInfo {
  return {
    id,
    name: `name of ${id}`,
    attempts: [
      {
        startTimeEpoch: T0,
        endTimeEpoch: completed ? T0 + 65_000 : -1,
        lastUpdatedEpoch: T0 + 70_000,
        completed,
        sparkUser: 'ann',
      },
    ],
  };
}

const APPS = [info('app-done', true), info('app-running', false)];

test('the listing shows the completed applications, or with showIncomplete the others, as Spark does', () => {
  const done = render(h(HistoryListing, { apps: APPS, error: undefined, showIncomplete: false }));
  assert.match(done, /Completed Applications/);
  assert.match(done, /href="#\/app\/app-done"/);
  assert.doesNotMatch(done, /app-running/);
  assert.match(done, />1\.1 min</, 'the duration');
  assert.match(done, /href="#\/\?showIncomplete=true"[^>]*>Show incomplete applications/);

  const running = render(h(HistoryListing, { apps: APPS, error: undefined, showIncomplete: true }));
  assert.match(running, /Incomplete Applications/);
  assert.match(running, /href="#\/app\/app-running"/);
  assert.doesNotMatch(running, /href="#\/app\/app-done"/);
  assert.match(running, /Back to completed applications/);

  const none = render(h(HistoryListing, { apps: [], error: undefined, showIncomplete: false }));
  assert.match(none, /No completed applications found!/);
  const failed = render(
    h(HistoryListing, { apps: undefined, error: 'boom', showIncomplete: false }),
  );
  assert.match(failed, /The applications could not be listed: boom/);
});

test('#/?showIncomplete=true round-trips; any other query is the plain listing', () => {
  assert.deepEqual(parseRoute('#/?showIncomplete=true'), {
    name: 'overview',
    showIncomplete: true,
  });
  assert.deepEqual(parseRoute('#/?showIncomplete=no'), { name: 'overview' });
  assert.equal(href({ name: 'overview', showIncomplete: true }), '#/?showIncomplete=true');
  assert.equal(href({ name: 'overview' }), '#/');
});

test('in history mode the master’s routes have nothing behind them, and no log link is offered', () => {
  const apps = { apps: APPS, error: undefined };
  for (const hash of ['#/workers', '#/drivers', '#/worker/w-1', '#/nowhere']) {
    const { title, body } = historyView(parseRoute(hash), apps);
    assert.equal(title, 'Not found', hash);
    assert.match(render(body), /A history server shows logged applications only/);
  }
  const log = historyView(parseRoute('#/log?appId=app-done&executorId=0&logType=stderr'), apps);
  assert.match(render(log.body), /reads event logs only/);
  const unknown = historyView(parseRoute('#/app/app-gone'), apps);
  assert.match(render(unknown.body), /No event log of application app-gone/);
  assert.equal(
    historyView(parseRoute('#/app/app-done/job/3'), apps).title,
    'Job 3 of name of app-done',
  );

  const links = h(LogLinks, { source: { appId: 'app-done', executorId: 0 }, label: 'executor 0' });
  assert.equal(render(links), '');
  assert.match(render(links, 'master'), /stderr/);
});

test('the history data source: connected at once with no feed; no logs, kills or workers', async () => {
  const source = new HistoryDataSource();
  const heard: boolean[] = [];
  source.subscribe({
    snapshot: () => assert.fail('no snapshot'),
    change: () => assert.fail('no change'),
    connection: (up) => heard.push(up),
  });
  assert.deepEqual(heard, [true]);
  await assert.rejects(source.readLog({ appId: 'a', executorId: 0, logType: 'stderr' }, 0, 10), {
    message: NO_EXECUTOR_LOGS,
  });
  const ended = await new Promise<string>((resolve) =>
    source.followLog({ appId: 'a', executorId: 0, logType: 'stderr' }, 0, {
      chunk: () => assert.fail('no bytes'),
      ended: (_n, reason) => resolve(reason),
    }),
  );
  assert.equal(ended, NO_EXECUTOR_LOGS);
  assert.equal((await source.kill({ kind: 'app', id: 'a' })).success, false);
  await assert.rejects(source.workerState('w-1'), /knows no workers/);
});
