/**
 * The master's `/api/v1/applications` lists, beside the applications it keeps, those whose event
 * logs are in the dir its applications log into (a local cluster's master: the drivers' default
 * dir under the user's state dir), as Spark's history server does; each opens from its log. Real
 * processes: a master with wick.deploy.eventLogByDefault over a state dir holding an earlier
 * application's log, a live application of its own writing its log there too (listed once), and
 * a master without a dir over the same state dir, which lists no log.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { EventLogWriter } from '../../backend/eventlog/EventLogWriter.js';
import { startMaster } from '../helpers/cluster.js';
import { uiFetch } from '../helpers/webUi.js';
import { appEvents } from '../history/appEvents.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

// biome-ignore lint/suspicious/noExplicitAny: JSON as Spark writes it, read field by field.
type Json = any;

async function api(webUiUrl: string, path: string, status = 200): Promise<Json> {
  const res = await uiFetch(`${webUiUrl}/api/v1${path}`);
  const body = await res.text();
  assert.equal(res.status, status, `GET ${path}: ${res.status} ${body}`);
  return JSON.parse(body);
}

test('logged applications listed beside the kept ones, once each, and opened from their logs', {
  timeout: 180_000,
}, async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'wick-test-masterlogs-'));
  t.after(() => rmSync(state, { recursive: true, force: true }));
  const logDir = join(state, 'wick', 'event-logs');
  mkdirSync(logDir, { recursive: true });
  const earlier = 'app-20200101000000-0042';
  const writer = await EventLogWriter.start({ dir: logDir, appId: earlier, compress: false });
  for (const e of appEvents(earlier, Date.UTC(2020, 0, 1))) writer.write(e);
  await writer.close();

  const env = { XDG_STATE_HOME: state };
  const [local, plain] = await Promise.all([
    startMaster(t, { env, conf: { 'wick.deploy.eventLogByDefault': 'true' } }),
    startMaster(t, { env }),
  ]);
  const wc = await WickContext.create({
    master: local.url,
    appName: 'live one',
    conf: { 'wick.eventLog.dir': logDir },
  });
  t.after(() => wc.stop());
  assert.ok(wc.eventLogPath?.startsWith(logDir), `the live app logs there: ${wc.eventLogPath}`);

  // Kept once its driver's first report came, logged once its first lines are written.
  let listed: Json[] = [];
  const deadline = Date.now() + 60_000;
  while (!listed.some((a: Json) => a.id === wc.appId) && Date.now() < deadline) {
    listed = await api(local.webUiUrl, '/applications');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(
    listed.map((a: Json) => a.id),
    [wc.appId, earlier],
    'the live one (kept, once though logged too), then the logged one; the latest started first',
  );
  const old = listed[1];
  assert.equal(old.name, `name of ${earlier}`);
  assert.equal(old.attempts[0].completed, true);
  assert.equal(old.attempts[0].sparkUser, 'ann');
  const jobs: Json[] = await api(local.webUiUrl, `/applications/${earlier}/jobs`);
  assert.deepEqual(
    jobs.map((j: Json) => [j.jobId, j.status]).sort(),
    [
      [0, 'SUCCEEDED'],
      [1, 'FAILED'],
    ],
    'its jobs, replayed from its log',
  );
  assert.equal((await api(local.webUiUrl, `/applications/${earlier}`)).id, earlier);

  // Ended, its log closed: a master started now (as after a restart) lists it from its log, and
  // the one that keeps it lists it once, at every look at the dir.
  await wc.stop();
  const finalLog = join(logDir, wc.appId);
  while (!existsSync(finalLog) && Date.now() < deadline + 60_000)
    await new Promise((r) => setTimeout(r, 50));
  const restarted = await startMaster(t, {
    env,
    conf: { 'wick.deploy.eventLogByDefault': 'true' },
  });
  const fromLog: Json[] = await api(restarted.webUiUrl, '/applications');
  assert.deepEqual(
    fromLog.map((a: Json) => [a.id, a.attempts[0].completed]),
    [
      [wc.appId, true],
      [earlier, true],
    ],
  );
  const seenSince = Date.now();
  while (Date.now() - seenSince < 2_500) {
    const ids = (await api(local.webUiUrl, '/applications')).map((a: Json) => a.id);
    assert.deepEqual(ids, [wc.appId, earlier], 'kept and logged: listed once');
    await new Promise((r) => setTimeout(r, 200));
  }

  // The master without a dir knows neither: the same state dir, but it tells no app to log.
  const plainList: Json[] = await api(plain.webUiUrl, '/applications');
  assert.deepEqual(plainList, []);
  await api(plain.webUiUrl, `/applications/${earlier}/jobs`, 404);
});
