/**
 * A past run's pages in the VS Code panel (webview/components/pastRunView.tsx): which routes are a
 * past run's (with a master or without one), what they show, and how the panel hears of past
 * runs and asks a run's event log through the extension. Rendered in Node; effects (the asks)
 * do not run here: the in-host step (test/e2e/host/pastRunPanel.ts) reads the real panel.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { type ComponentChildren, h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { type DashboardContext, DashboardCtx } from '../../webview/components/context.js';
import { PastRunsSection, pastRunOf, pastRunView } from '../../webview/components/pastRunView.js';
import { DashboardStore, type StoreState } from '../../webview/data/store.js';
import { VsCodeDataSource } from '../../webview/data/VsCodeDataSource.js';
import { type ExtensionToPanel, PanelToExtension } from '../../webview/protocol.js';
import { parseRoute } from '../../webview/router.js';
import { app, masterState } from './fixtures/states.js';

const RUN = { appId: 'app-20261207100000-0001', name: 'Fail Task', state: 'FAILED' };

function render(node: ComponentChildren): string {
  const value: DashboardContext = {
    source: undefined,
    capabilities: { killEnabled: true },
    config: { mode: 'master', host: 'vscode' },
    now: 0,
    announce: () => {},
  };
  return renderToString(h(DashboardCtx.Provider, { value }, node));
}

function state(fields: Partial<StoreState>): StoreState {
  return { ...new DashboardStore().state, ...fields };
}

test("a past run's application, job and stage routes are its own, with no master or another one", () => {
  for (const master of [undefined, masterState()]) {
    const s = state({ master, pastRuns: [RUN] });
    for (const hash of [
      `#/app/${RUN.appId}`,
      `#/app/${RUN.appId}/job/0`,
      `#/app/${RUN.appId}/stage/0/0`,
    ])
      assert.equal(pastRunOf(parseRoute(hash), s)?.appId, RUN.appId, hash);
    assert.equal(pastRunOf(parseRoute('#/app/app-other'), s), undefined);
    assert.equal(pastRunOf(parseRoute('#/workers'), s), undefined);
  }
  // An application the master lists is the master's, even with a past run's id.
  const listed = state({
    master: masterState({ completedApps: [app({ id: RUN.appId, state: 'FINISHED' })] }),
    pastRuns: [RUN],
  });
  assert.equal(pastRunOf(parseRoute(`#/app/${RUN.appId}`), listed), undefined);
});

test("a past run's pages say where they come from and name the run", () => {
  const page = pastRunView(parseRoute(`#/app/${RUN.appId}`), RUN);
  assert.equal(page.title, 'Application: Fail Task');
  const html = render(page.body);
  assert.match(html, /earlier session.*local cluster \(FAILED\).*read from its event log/);
  assert.match(html, /href="#\/apps"/);
  assert.equal(
    pastRunView(parseRoute(`#/app/${RUN.appId}/job/3`), RUN).title,
    'Job 3 of Fail Task',
  );
  const listed = render(h(PastRunsSection, { runs: [RUN] }));
  assert.match(listed, /Earlier Sessions/);
  assert.match(listed, new RegExp(`href="#/app/${RUN.appId}"`));
  assert.match(listed, /Fail Task.*FAILED/);
  assert.equal(render(h(PastRunsSection, { runs: [] })), '');
  assert.equal(
    pastRunView(parseRoute(`#/app/${RUN.appId}/stage/1/0`), RUN).title,
    'Stage 1 (attempt 0) of Fail Task',
  );
});

test('the panel hears of past runs and asks a run’s event log through the extension', async () => {
  const posted: PanelToExtension[] = [];
  let listener: ((e: MessageEvent) => void) | undefined;
  const source = new VsCodeDataSource(
    { postMessage: (m) => posted.push(m), getState: () => undefined, setState: () => {} },
    {
      addEventListener: (_t, fn) => {
        listener = fn;
      },
      removeEventListener: () => {},
    },
  );
  const deliver = (m: ExtensionToPanel) => listener?.({ data: m } as MessageEvent);
  const store = new DashboardStore();
  store.connect(source);
  deliver({ type: 'pastRuns', runs: [RUN] });
  assert.deepEqual(store.state.pastRuns, [RUN]);
  // Bounded as the agent's list is.
  deliver({
    type: 'pastRuns',
    runs: Array.from({ length: 150 }, (_, i) => ({ ...RUN, appId: `app-${i}` })),
  });
  assert.equal(store.state.pastRuns.length, 100);

  const info = source.historyApp(RUN.appId);
  const ask = posted.at(-1) as Extract<PanelToExtension, { type: 'requestHistoryApp' }>;
  assert.equal(ask.type, 'requestHistoryApp');
  assert.ok(Value.Check(PanelToExtension, ask), JSON.stringify(ask));
  const log = {
    appId: RUN.appId,
    logName: RUN.appId,
    fileSize: 1234,
    cut: false,
    compressed: false,
    rolled: false,
    failure: 'Error: bad record 50',
  };
  deliver({ type: 'historyApp', requestId: ask.requestId, info: log });
  assert.deepEqual(await info, log);
  const missing = source.historyApp('app-gone');
  const ask2 = posted.at(-1) as Extract<PanelToExtension, { type: 'requestHistoryApp' }>;
  deliver({ type: 'historyApp', requestId: ask2.requestId, error: 'No event log of app-gone' });
  await assert.rejects(missing, /No event log of app-gone/);
  // What the extension refuses: an id past its bound, a missing one.
  for (const bad of [
    { type: 'requestHistoryApp', requestId: 1, appId: 'x'.repeat(1000) },
    { type: 'requestHistoryApp', requestId: 1 },
  ])
    assert.equal(Value.Check(PanelToExtension, bad), false);
});
