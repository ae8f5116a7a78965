/**
 * Spark's POST /workers/kill/?host= on a real master's web UI, with real workers: it
 * decommissions every worker on the host (DECOMMISSIONED on the master, and the worker, running
 * nothing, exits 0), answers 404 for a host with no registered worker (Spark's answer), and is
 * guarded as the UI's kills are: the login, the dashboard's header, POST only, wick.ui.killEnabled.
 * The workers bind 127.0.0.2 and 127.0.0.3 (loopback too), so that a host names one worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MasterWatch } from '../helpers/apps.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

const HEADER = { 'x-wick-request': '1' };

async function call(url: string, init: RequestInit = {}, asOperator = true) {
  const res = await (asOperator ? uiFetch : fetch)(url, { redirect: 'manual', ...init });
  return { status: res.status, text: await res.text() };
}

test('POST /workers/kill/?host= decommissions the workers on that host; refused without login, header or POST', {
  timeout: 90_000,
}, async (t) => {
  const master = await startMaster(t);
  const watch = await MasterWatch.connect(master.url);
  t.after(() => watch.stop());
  const victim = await startWorker(t, master.url, { host: '127.0.0.2', cores: 1 });
  const bystander = await startWorker(t, master.url, { host: '127.0.0.3', cores: 1 });
  await watch.waitFor((s) => s.workers.filter((w) => w.state === 'ALIVE').length === 2);
  const url = `${master.webUiUrl}/workers/kill/?host=127.0.0.2`;

  const refused: [string, Promise<{ status: number; text: string }>, number, RegExp][] = [
    ['without login', call(url, { method: 'POST', headers: HEADER }, false), 401, /./],
    ['GET', call(url, { headers: HEADER }), 405, /must be a POST/],
    ['without the dashboard header', call(url, { method: 'POST' }), 403, /x-wick-request/],
    [
      'cross-site',
      call(url, { method: 'POST', headers: { ...HEADER, 'sec-fetch-site': 'cross-site' } }),
      403,
      /cross-site/,
    ],
    [
      'without a host',
      call(`${master.webUiUrl}/workers/kill/`, { method: 'POST', headers: HEADER }),
      400,
      /Missing \?host=/,
    ],
    [
      'with a bad host',
      call(`${master.webUiUrl}/workers/kill/?host=a%20b`, { method: 'POST', headers: HEADER }),
      400,
      /Invalid host \\"a b\\"/,
    ],
  ];
  for (const [what, pending, status, text] of refused) {
    const r = await pending;
    assert.equal(r.status, status, `${what}: ${r.text}`);
    assert.match(r.text, text, what);
  }
  // None of them decommissioned anything.
  let s = await watch.waitFor(() => true);
  assert.deepEqual(
    s.workers.map((w) => w.state),
    ['ALIVE', 'ALIVE'],
  );

  const none = await call(`${master.webUiUrl}/workers/kill/?host=127.0.0.9`, {
    method: 'POST',
    headers: HEADER,
  });
  assert.equal(none.status, 404, none.text);
  assert.match(JSON.parse(none.text).message, /no registered worker at "127\.0\.0\.9"/);

  const ok = await call(url, { method: 'POST', headers: HEADER });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(JSON.parse(ok.text).workerIds, [victim.workerId]);
  s = await watch.waitFor(
    (x) => x.workers.find((w) => w.id === victim.workerId)?.state === 'DECOMMISSIONED',
  );
  // It ran nothing: it exits at once, cleanly.
  assert.equal(await victim.exited, 0, victim.stderr);
  assert.match(victim.stderr, /Decommissioning this worker \(the master asked\)/);
  // Once the master has removed it (its connection dropped), asking again finds no worker
  // there: Spark's 404. Until then it answers that the worker is decommissioning already.
  for (;;) {
    const again = await call(url, { method: 'POST', headers: HEADER });
    if (again.status === 404) break;
    assert.equal(again.status, 200, again.text);
    assert.match(again.text, /already decommissioning/);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Removed, it is still listed DECOMMISSIONED (it left as asked), not DEAD: in the master's
  // state, and in Spark's /json.
  s = await watch.waitFor(() => true);
  assert.equal(s.workers.find((w) => w.id === victim.workerId)?.state, 'DECOMMISSIONED');
  const json = (await (await uiFetch(`${master.webUiUrl}/json`)).json()) as {
    workers: { id: string; state: string }[];
    aliveworkers: number;
  };
  assert.equal(json.workers.find((w) => w.id === victim.workerId)?.state, 'DECOMMISSIONED');
  assert.equal(json.aliveworkers, 1);
  assert.equal(s.workers.find((w) => w.id === bystander.workerId)?.state, 'ALIVE');
  assert.ok(bystander.isRunning);
});

test('wick.ui.killEnabled=false: POST /workers/kill/ is refused, the worker stays ALIVE', {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t, { conf: { 'wick.ui.killEnabled': 'false' } });
  const watch = await MasterWatch.connect(master.url);
  t.after(() => watch.stop());
  const worker = await startWorker(t, master.url, { host: '127.0.0.2', cores: 1 });
  await watch.waitFor((s) => s.workers.some((w) => w.state === 'ALIVE'));
  const r = await call(`${master.webUiUrl}/workers/kill/?host=127.0.0.2`, {
    method: 'POST',
    headers: HEADER,
  });
  assert.equal(r.status, 403, r.text);
  assert.match(r.text, /wick\.ui\.killEnabled=false/);
  const s = await watch.waitFor(() => true);
  assert.equal(s.workers.find((w) => w.id === worker.workerId)?.state, 'ALIVE');
  assert.ok(worker.isRunning);
});
