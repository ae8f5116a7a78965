/**
 * The master's web UI as a reverse proxy for a worker's (/proxy/<workerId>/…), to a real HTTP
 * client, against a real master and worker process: Spark's /log page and /json of the worker, the
 * dashboard's log API, the redirect to the dashboard's worker page, and the checks — a bad worker
 * id or log path is a 400 naming it, an unknown worker a 404.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { runExecutor, startLogCluster } from '../helpers/logCluster.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

test("the master's web UI serves a worker's log pages through itself", {
  timeout: 60_000,
}, async (t) => {
  const { master, worker } = await startLogCluster(t);
  const { appId, state } = await runExecutor(t, master.url, "console.log('proxied line')");
  await state('EXITED');
  const base = `${master.webUiUrl}/proxy/${encodeURIComponent(worker.workerId)}`;
  const q = `appId=${appId}&executorId=0`;

  const page = await uiFetch(`${base}/log?${q}`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/plain/);
  assert.equal(
    await page.text(),
    `==== Bytes 0-13 of 13 of ${appId}/0/stdout ====\nproxied line\n`,
  );

  const range = await uiFetch(`${base}/api/log?${q}&offset=8`);
  assert.equal(range.status, 200);
  const body = (await range.json()) as { offset: number; data: string; totalSize: number };
  assert.deepEqual([body.offset, body.totalSize], [8, 13]);
  assert.equal(Buffer.from(body.data, 'base64').toString(), 'line\n');

  const json = await uiFetch(`${base}/json`);
  assert.equal(json.status, 200);
  assert.equal(((await json.json()) as { id: string }).id, worker.workerId);

  const redirect = await uiFetch(`${base}/`, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  assert.equal(
    redirect.headers.get('location'),
    `/#/worker/${encodeURIComponent(worker.workerId)}`,
  );

  const badId = await uiFetch(`${master.webUiUrl}/proxy/bad!id/log?${q}`);
  assert.equal(badId.status, 400);
  assert.match(
    await badId.text(),
    /Invalid workerId "bad!id": expected a worker id such as worker-/,
  );

  const traversal = await uiFetch(`${base}/log?appId=..&executorId=0`);
  assert.equal(traversal.status, 400);
  assert.match(
    await traversal.text(),
    /Invalid application id "\.\.": expected an id such as app-/,
  );

  const badStream = await uiFetch(`${base}/api/log?${q}&logType=../../etc/passwd`);
  assert.equal(badStream.status, 400);
  assert.match(await badStream.text(), /Invalid logType "\.\.\/\.\.\/etc\/passwd"/);

  const unknown = await uiFetch(
    `${master.webUiUrl}/proxy/worker-20260101000000-10.0.0.9-1/log?${q}`,
  );
  assert.equal(unknown.status, 404);
  assert.match(await unknown.text(), /No worker worker-20260101000000-10\.0\.0\.9-1/);
});
