/**
 * The master's web UI over HTTP, against a real master process with mock workers and
 * applications: Spark's /json and /json/clusterutilization, the dashboard page and its
 * Content-Security-Policy, the state pushed over Server-Sent Events, and the log API's checks.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startMaster } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import {
  appDescription,
  appIn,
  connectClient,
  MockApp,
  MockWorker,
  workerIn,
} from '../helpers/masterMocks.js';
import { assertSparkMasterJson } from '../helpers/sparkJson.js';
import { SseClient } from '../helpers/sse.js';
import { runSecret, uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

const keysOf = (o: unknown) => Object.keys(o as Record<string, unknown>).sort();

function assertHas(o: unknown, keys: string[], what: string): void {
  for (const k of keys)
    assert.ok(o && k in (o as object), `${what} lacks ${k}: ${JSON.stringify(o)}`);
}

test("GET /json has every field of Spark's master /json, and /json/clusterutilization adds up", {
  timeout: 30_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const worker = await MockWorker.start(t, master.url, { cores: 4, memory: 4096 });
  await worker.registerAndWait();
  const running = await MockApp.start(t, master.url);
  const runningId = await running.register(
    appDescription({ name: 'small', memoryPerExecutorMB: 1024 }),
  );
  const waiting = await MockApp.start(t, master.url);
  const waitingId = await waiting.register(
    appDescription({ name: 'hungry', memoryPerExecutorMB: 65536 }),
  );
  const finished = await MockApp.start(t, master.url);
  const finishedId = await finished.register(
    appDescription({ name: 'done', memoryPerExecutorMB: 1 << 20 }),
  );
  finished.unregister();
  await client.waitFor(
    (s) =>
      workerIn(s, worker.id)?.coresUsed === 4 &&
      appIn(s, waitingId)?.state === 'WAITING' &&
      appIn(s, finishedId)?.state === 'FINISHED',
  );

  const res = await uiFetch(`${master.webUiUrl}/json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const json = (await res.json()) as Record<string, unknown>;
  assertSparkMasterJson(json);
  assert.equal(json.url, master.url);
  assert.equal(json.status, 'ALIVE');
  assert.deepEqual(
    [json.aliveworkers, json.cores, json.coresused, json.memory, json.memoryused],
    [1, 4, 4, 4096, 1024],
  );
  const [w] = json.workers as Record<string, unknown>[];
  assertHas(
    w,
    [
      'id',
      'host',
      'port',
      'webuiaddress',
      'cores',
      'coresused',
      'coresfree',
      'memory',
      'memoryused',
      'memoryfree',
      'state',
      'lastheartbeat',
    ],
    'a worker',
  );
  assert.deepEqual(
    [w?.id, w?.webuiaddress, w?.coresfree, w?.memoryfree, w?.state],
    [worker.id, `http://127.0.0.1:${worker.port + 1}`, 0, 3072, 'ALIVE'],
  );
  const appKeys = [
    'id',
    'starttime',
    'name',
    'cores',
    'user',
    'memoryperexecutor',
    'submitdate',
    'state',
    'duration',
  ];
  const active = json.activeapps as Record<string, unknown>[];
  assert.deepEqual(
    active.map((a) => [a.id, a.state]).sort(),
    [
      [runningId, 'RUNNING'],
      [waitingId, 'WAITING'],
    ].sort(),
  );
  for (const a of active) assertHas(a, appKeys, 'an active app');
  const [done] = json.completedapps as Record<string, unknown>[];
  assertHas(done, appKeys, 'a completed app');
  assert.deepEqual(
    [done?.id, done?.name, done?.user, done?.state],
    [finishedId, 'done', 'tester', 'FINISHED'],
  );
  assert.equal(typeof done?.duration, 'number');

  const util = await (await uiFetch(`${master.webUiUrl}/json/clusterutilization`)).json();
  assert.deepEqual(util, {
    waitingDrivers: 0,
    cores: 4,
    coresused: 4,
    coresutilization: 100,
    memory: 4096,
    memoryused: 1024,
    memoryutilization: 25,
  });
  assert.deepEqual(keysOf(await (await uiFetch(`${master.webUiUrl}/json/`)).json()), keysOf(json));
});

test('the dashboard page: a nonce for its one script, a strict CSP, no inline code', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const res = await uiFetch(`${master.webUiUrl}/`);
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
  assert.ok(nonce, csp);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  // One script with the nonce and a src; the other is the JSON configuration, never executed.
  assert.deepEqual(
    scripts.map((m) =>
      m[1]?.includes('src=') ? `src nonce=${m[1].includes(`nonce="${nonce}"`)}` : m[1]?.trim(),
    ),
    ['type="application/json" id="wick-config"', 'src nonce=true'],
  );
  assert.doesNotMatch(html, /style=|onload=|onclick=/);
  // A second page gets another nonce.
  const again = (await uiFetch(`${master.webUiUrl}/`)).headers.get('content-security-policy');
  assert.notEqual(again, csp);
  const js = await uiFetch(`${master.webUiUrl}/static/webview.js`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.ok((await js.arrayBuffer()).byteLength > 1000);
  const css = await uiFetch(`${master.webUiUrl}/static/webview.css`);
  assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
  await css.arrayBuffer();
  for (const path of ['/static/../package.json', '/static/%2e%2e/package.json', '/nope']) {
    const r = await uiFetch(`${master.webUiUrl}${path}`);
    assert.equal(r.status, 404, path);
    await r.text();
  }
});

test('GET /api/events pushes a snapshot, then each change as the master pushes it', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const events = await SseClient.open(`${master.webUiUrl}/api/events`, {
    authorization: `Bearer ${runSecret()}`,
  });
  t.after(() => events.close());
  assert.match(events.response.headers.get('content-type') ?? '', /^text\/event-stream/);
  // A compressing proxy (code-server's /proxy/PORT/) must pass the events through as they come.
  assert.match(events.response.headers.get('cache-control') ?? '', /\bno-transform\b/);
  const snapshot = JSON.parse((await events.nextOf('snapshot')).data);
  assert.equal(snapshot.state.url, master.url);
  assert.deepEqual(snapshot.state.workers, []);
  assert.deepEqual(snapshot.capabilities, { killEnabled: true });
  assert.equal(snapshot.utilization.length, 1);

  const worker = await MockWorker.start(t, master.url, { cores: 2, memory: 512 });
  worker.register();
  for (;;) {
    const change = JSON.parse((await events.nextOf('change')).data);
    assert.ok(change.seq > snapshot.state.seq);
    if (change.workers?.some((w: { id: string }) => w.id === worker.id)) break;
  }
});

test('the log API checks its parameters and finds the worker from the master state', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const cases: [string, number, RegExp][] = [
    ['appId=app-1', 400, /either application or driver/],
    ['appId=app-1&executorId=x', 400, /Invalid executorId/],
    ['appId=app-1&executorId=-1', 400, /Invalid executorId/],
    ['appId=app-1&executorId=0&driverId=d', 400, /either application or driver/],
    ['driverId=d&logType=../../etc/passwd', 400, /Invalid logType/],
    ['driverId=d&offset=-5', 400, /Invalid offset/],
    ['driverId=d&byteLength=99999999999', 400, /Invalid byteLength/],
    ['appId=app-1&executorId=0', 404, /No application app-1/],
    ['driverId=driver-1', 404, /No driver driver-1/],
  ];
  for (const [query, status, body] of cases) {
    for (const path of ['/api/log', '/api/log/follow']) {
      const q = path.endsWith('follow') && !query.includes('offset') ? `${query}&offset=0` : query;
      const res = await uiFetch(`${master.webUiUrl}${path}?${q}`);
      const text = await res.text();
      assert.equal(res.status, status, `${path}?${q}: ${text}`);
      assert.match(text, body, `${path}?${q}`);
    }
  }
  const w = await uiFetch(`${master.webUiUrl}/api/worker/worker-unknown`);
  assert.equal(w.status, 404);
  await w.text();
});
