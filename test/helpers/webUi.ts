/**
 * The web UI with authentication on, for tests: the routes the master's and a worker's UI serve
 * (asked of the UI classes themselves, so that a route added later is visited without editing a
 * list), a login as a browser makes it (the link `wick ui-url` prints, then its cookie), and an
 * application driven through its stdin, so that a test waits for what it prints, never a clock.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { clientEnv } from '../../backend/client/masterConnection.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import { MasterWebUI } from '../../backend/http/MasterWebUI.js';
import { WorkerWebUI } from '../../backend/http/WorkerWebUI.js';
import { resolveClusterAuth } from '../../backend/rpc/clusterSecret.js';
import { loginLink } from '../../backend/shared/uiLogin.js';
import { repoRoot, wickBin } from './cli.js';

export interface Route {
  method: string;
  path: string;
}

/**
 * Every route (and middleware path) of a master's and a worker's web UI with authentication on,
 * from UIs started in this process for the asking and stopped at once.
 */
export async function uiRoutes(): Promise<{ master: Route[]; worker: Route[] }> {
  const conf = new WickConf().set('wick.authenticate.secret', 'routes-listing-secret-0123');
  const env = await clientEnv(new WickConf().set('wick.authenticate', 'false'), 'routeLister');
  try {
    const nowhere = env.endpointRef({ address: '127.0.0.1:1', name: 'Master' });
    const master = await MasterWebUI.start(nowhere, '127.0.0.1', 0, 0, conf);
    const worker = await WorkerWebUI.start('127.0.0.1', 0, 0, conf);
    const routes = { master: master.routes, worker: worker.routes };
    await Promise.all([master.stop(), worker.stop()]);
    return routes;
  } finally {
    await env.stop();
  }
}

/** Opens a login link as a browser does; resolves with the `name=value` of the cookie it set. */
export async function openLoginLink(link: string): Promise<string> {
  const res = await fetch(link, { redirect: 'manual', headers: { accept: 'text/html' } });
  const body = await res.text();
  assert.equal(res.status, 200, `${link} answered ${res.status}: ${body}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  assert.match(
    setCookie,
    /^wick_session_[0-9a-f]{12}=[^;]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/,
  );
  return setCookie.slice(0, setCookie.indexOf(';'));
}

/** Logs in to the web UI at `webUiUrl` with a link made from `secret`, as `wick ui-url` makes it. */
export function logIn(webUiUrl: string, secret: string): Promise<string> {
  return openLoginLink(loginLink(webUiUrl, secret));
}

export interface StdinApp {
  child: ChildProcess;
  /** Sends one line to the application ("job N", "stop"). */
  say(line: string): void;
  /** Resolves with the first line it prints that matches. */
  printed(pattern: RegExp): Promise<string>;
}

/**
 * `wick submit` of test/webview/fixtures/dashboardApp.ts (named `name`); resolves once it has
 * registered ("ready"). `args` go before the app (e.g. --conf for the secret), `env` to it.
 */
export async function submitStdinApp(
  t: TestContext,
  masterUrl: string,
  name: string,
  opts: { args?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<StdinApp> {
  const child = spawn(
    process.execPath,
    [
      wickBin,
      'submit',
      '--master',
      masterUrl,
      '--total-executor-cores',
      '1',
      '--executor-memory',
      '256m',
      ...(opts.args ?? []),
      join(repoRoot, 'test', 'webview', 'fixtures', 'dashboardApp.ts'),
      name,
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, WICK_MASTER: undefined, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (l: string) => void }[] = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(l)) w.resolve(l);
      else waiters.push(w);
    }
  });
  const printed = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return resolve(seen);
      waiters.push({ pattern, resolve });
      child.once('exit', (code) =>
        reject(new Error(`${name} exited (${code}) before printing ${pattern}:\n${stderr}`)),
      );
    });
  await printed(/^ready$/);
  return { child, say: (line) => child.stdin?.write(`${line}\n`), printed };
}

/**
 * The secret this test file's masters made (each test file has a config folder of its own, see
 * test/helpers/configPerFile.mjs), for a test of what a web UI serves once logged in.
 */
export function runSecret(): string {
  const found = resolveClusterAuth(new WickConf());
  if (found.mode !== 'secret') throw new Error('no cluster secret yet: start a master first');
  return found.secret;
}

/** `fetch` as a script that holds the cluster secret: with `Authorization: Bearer`. */
export function uiFetch(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, {
    ...init,
    headers: {
      authorization: `Bearer ${runSecret()}`,
      ...(init.headers as Record<string, string>),
    },
  });
}
