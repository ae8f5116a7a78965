/**
 * Spark's /json fields that tools read, against real master and worker processes: the `resources*`
 * fields (custom resources are not built yet, so they hold what Spark writes for a cluster without
 * any: an empty object per worker, executor or driver, an empty list of requirements per
 * application), an application's `cores` as Spark 3 writes it (granted), the worker's executors'
 * `appdesc`, and dates as java.util.Date.toString writes them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { javaDateString } from '../../backend/shared/javaDate.js';
import { startMaster, startWorker } from '../helpers/cluster.js';
import { checkNothingLeftRunning } from '../helpers/leaks.js';
import { appDescription, connectClient, MockApp, MockWorker } from '../helpers/masterMocks.js';
import { uiFetch } from '../helpers/webUi.js';

checkNothingLeftRunning();

type Json = Record<string, unknown>;

/** `Mon Dec 07 00:09:04 UTC 2026`: Java's Date.toString, as Spark's submitdate is written. */
const JAVA_DATE = /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) [A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d \S+ \d{4}$/;

test('javaDateString writes a time as java.util.Date.toString does, in local time', () => {
  const local = new Date(2026, 11, 7, 0, 9, 4);
  assert.equal(javaDateString(local.getTime()), `Mon Dec 07 00:09:04 ${zoneOf(local)} 2026`);
  assert.match(javaDateString(0), JAVA_DATE);
});

function zoneOf(d: Date): string {
  return (
    new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
      .formatToParts(d)
      .find((p) => p.type === 'timeZoneName')?.value ?? ''
  );
}

test("the master's /json has Spark's resources fields and Java dates", {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const workers = [
    await MockWorker.start(t, master.url, { cores: 4, memory: 4096 }),
    await MockWorker.start(t, master.url, { cores: 2, memory: 2048 }),
  ];
  for (const w of workers) await w.registerAndWait();
  const app = await MockApp.start(t, master.url);
  const appId = await app.register(
    appDescription({ maxCores: 100, coresPerExecutor: 1, memoryPerExecutorMB: 256 }),
  );
  await client.waitFor((s) => s.activeApps.find((a) => a.id === appId)?.coresGranted === 6);

  const json = (await (await uiFetch(`${master.webUiUrl}/json`)).json()) as Json;
  // One (empty) object per alive worker, as Spark lists each worker's resources.
  assert.deepEqual(json.resources, [{}, {}]);
  assert.deepEqual(json.resourcesused, [{}, {}]);
  for (const w of json.workers as Json[]) {
    assert.deepEqual([w.resources, w.resourcesused, w.resourcesfree], [{}, {}, {}]);
  }
  const a = (json.activeapps as Json[]).find((x) => x.id === appId) as Json;
  assert.deepEqual([a.resourcesperexecutor, a.resourcesperslave], [[], []]);
  // Spark 3's `cores`: what is granted (6 of the workers' 6), not the cap; Wick's cap after it.
  assert.deepEqual([a.cores, a.maxcores], [6, 100]);
  assert.match(String(a.submitdate), JAVA_DATE);
  assert.equal(a.submitdate, javaDateString(a.starttime as number));
});

test("a worker's /json: each executor's appdesc and resources, the worker's resources fields", {
  timeout: 60_000,
}, async (t) => {
  const master = await startMaster(t);
  const worker = await startWorker(t, master.url, { cores: 1 });
  await master.waitForStderr(/Registering worker/);
  const app = await MockApp.start(t, master.url);
  const script = 'setInterval(() => {}, 1000)';
  await app.register(
    appDescription({
      name: 'described',
      maxCores: 1,
      coresPerExecutor: 1,
      memoryPerExecutorMB: 64,
      command: { argv: [process.execPath, '-e', script], env: { NOT_SHOWN: 'x' } },
    }),
  );
  await app.endpoint.next('ExecutorUpdated', (m) => m.state === 'RUNNING');

  const json = (await (await uiFetch(`${worker.webUiUrl}/json`)).json()) as Json;
  assert.deepEqual([json.resources, json.resourcesused, json.resourcesfree], [{}, {}, {}]);
  const [e] = json.executors as Json[];
  assert.deepEqual(e?.resources, {});
  assert.deepEqual(e?.appdesc, {
    name: 'described',
    cores: 1,
    memoryperexecutor: 64,
    resourcesperexecutor: [],
    memoryperslave: 64,
    resourcesperslave: [],
    user: 'tester',
    command: `"${process.execPath}" "-e" "${script}"`,
  });
});
