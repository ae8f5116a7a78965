/**
 * The dashboard's entry point (bundled to dist/webview.js). It reads the host's configuration from
 * a JSON data block, picks the data source (VS Code's postMessage inside a webview panel, else
 * the web UI's HTTP API), and renders the app. No inline script or style anywhere: the page runs
 * under a strict Content-Security-Policy with a nonce.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-label/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { h, render } from 'preact';
import { App } from './components/App.js';
import type { DataSource } from './data/DataSource.js';
import { HistoryDataSource } from './data/HistoryDataSource.js';
import { HttpDataSource, pageBase } from './data/HttpDataSource.js';
import { DashboardStore } from './data/store.js';
import { type VsCodeApi, VsCodeDataSource } from './data/VsCodeDataSource.js';
import { HashNavigator, MemoryNavigator, type Navigator } from './navigation.js';
import type { DashboardConfig, ExtensionToPanel } from './protocol.js';

declare function acquireVsCodeApi(): VsCodeApi;

function readConfig(): DashboardConfig {
  const el = document.getElementById('wick-config');
  const parsed = el?.textContent ? (JSON.parse(el.textContent) as Partial<DashboardConfig>) : {};
  return {
    mode: parsed.mode === 'worker' || parsed.mode === 'history' ? parsed.mode : 'master',
    host: typeof acquireVsCodeApi === 'function' ? 'vscode' : 'web',
    ...(typeof parsed.workerId === 'string' ? { workerId: parsed.workerId } : {}),
  };
}

const config = readConfig();
document.body.dataset.host = config.host;
let source: DataSource;
let nav: Navigator;
if (config.host === 'vscode') {
  const api = acquireVsCodeApi();
  source = new VsCodeDataSource(api, window);
  const memory = new MemoryNavigator(api, (hash) => api.postMessage({ type: 'route', hash }));
  // The extension moves the panel too: a tree item's "Open in Dashboard".
  addEventListener('message', (e: MessageEvent) => {
    const m = e.data as ExtensionToPanel;
    if (m?.type === 'navigate' && typeof m.hash === 'string') memory.go(m.hash);
  });
  nav = memory;
} else if (config.mode === 'history') {
  source = new HistoryDataSource(pageBase(location.pathname));
  nav = new HashNavigator();
} else {
  source = new HttpDataSource(pageBase(location.pathname));
  nav = new HashNavigator();
}
const root = document.getElementById('app') ?? document.body;
render(h(App, { store: new DashboardStore(), source, config, nav }), root);
