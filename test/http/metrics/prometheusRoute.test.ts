/**
 * /metrics/prometheus against real processes: a master, two workers and a running application,
 * scraped as Prometheus scrapes them (a bearer token), the text read back by an independent
 * parser, and every value checked against what the cluster did; then a worker dies and the
 * master's metrics follow. Without the secret or the scrape token, nothing is served; the scrape
 * token opens nothing else.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metricCatalog } from '../../../backend/http/metrics/catalog.js';
import { metricsScrapeToken } from '../../../backend/shared/metricsToken.js';
import { startMaster, startWorker, wick } from '../../helpers/cluster.js';
import { checkNothingLeftRunning } from '../../helpers/leaks.js';
import { appIn, connectClient, workerIn } from '../../helpers/masterMocks.js';
import { Scrape } from '../../helpers/prometheus.js';
import { runSecret, submitStdinApp, uiFetch } from '../../helpers/webUi.js';

checkNothingLeftRunning();

const APP_NAME = 'Metrics "test" app';

async function scrape(webUiUrl: string): Promise<Scrape> {
  const res = await uiFetch(`${webUiUrl}/metrics/prometheus`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  return new Scrape(text);
}

/** Scrapes until `holds` (the web UI's mirror follows the master a push later than ours). */
async function scrapeUntil(webUiUrl: string, holds: (s: Scrape) => boolean): Promise<Scrape> {
  for (;;) {
    const s = await scrape(webUiUrl);
    if (holds(s)) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every name the catalogue lists for this process is served, and nothing else. */
function assertCatalogued(s: Scrape, served: 'master' | 'worker'): void {
  const listed =
    metricCatalog()
      .find((c) => c.served === served)
      ?.specs.map((x) => x.name) ?? [];
  assert.deepEqual([...s.families.keys()].sort(), [...listed].sort());
}

test('the master and a worker serve their metrics to a scraper with the token, and follow the cluster', {
  timeout: 120_000,
}, async (t) => {
  const master = await startMaster(t);
  const client = await connectClient(t, master.url);
  const a = await startWorker(t, master.url, { cores: 2, memory: '1g', label: 'worker A' });
  const b = await startWorker(t, master.url, { cores: 2, memory: '1g', label: 'worker B' });
  await client.waitFor((s) => s.workers.filter((w) => w.state === 'ALIVE').length === 2);

  // Nobody but a holder of the secret: no header, another token, a malformed header.
  for (const url of [master.webUiUrl, a.webUiUrl]) {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer not-the-cluster-secret' },
      { authorization: 'Basic x' },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${url}/metrics/prometheus`, { headers });
      const body = await res.text();
      assert.equal(res.status, 401, `${url} ${JSON.stringify(headers)}: ${body}`);
      assert.doesNotMatch(body, /metrics_/);
    }
  }

  // The scrape token `wick ui-url --metrics-token` prints opens the metrics, and nothing else.
  const printed = await wick(['ui-url', '--metrics-token']);
  assert.equal(printed.code, 0, printed.stderr);
  const token = printed.stdout.trim();
  assert.equal(token, metricsScrapeToken(runSecret()));
  const byToken = { authorization: `Bearer ${token}` };
  for (const url of [master.webUiUrl, a.webUiUrl]) {
    const res = await fetch(`${url}/metrics/prometheus`, { headers: byToken });
    assert.equal(res.status, 200, await res.text());
    for (const other of ['/json', '/api/events', '/']) {
      const refused = await fetch(`${url}${other}`, { headers: byToken });
      assert.equal(refused.status, 401, `${url}${other}: ${await refused.text()}`);
    }
    const foreign = await fetch(`${url}/metrics/prometheus`, {
      headers: { authorization: `Bearer ${metricsScrapeToken('another cluster secret')}` },
    });
    assert.equal(foreign.status, 401, await foreign.text());
  }

  const app = await submitStdinApp(t, master.url, APP_NAME, {
    args: ['--executor-cores', '1', '--total-executor-cores', '2'],
  });
  const running = await client.waitFor((s) =>
    s.activeApps.some(
      (x) => x.name === APP_NAME && x.executors.filter((e) => e.state === 'RUNNING').length === 2,
    ),
  );
  const appId = running.activeApps.find((x) => x.name === APP_NAME)?.id as string;
  const labels = { application_id: appId, application_name: APP_NAME };

  const m = await scrapeUntil(
    master.webUiUrl,
    (s) => s.samples('metrics_application_executors_Value', labels)[0]?.value === 2,
  );
  assertCatalogued(m, 'master');
  for (const suffix of ['Number', 'Value']) {
    assert.equal(m.value(`metrics_master_workers_${suffix}`, { type: 'gauges' }), 2);
    assert.equal(m.value(`metrics_master_aliveWorkers_${suffix}`, { type: 'gauges' }), 2);
    assert.equal(m.value(`metrics_master_apps_${suffix}`), 1);
    assert.equal(m.value(`metrics_master_waitingApps_${suffix}`), 0);
  }
  assert.equal(m.value('metrics_master_cores_Value'), 4);
  assert.equal(m.value('metrics_master_mem_MB_Value'), 2048);
  // What the workers lend is what the application was granted (no driver runs on them).
  assert.equal(m.value('metrics_application_cores_Value', labels), 2);
  assert.equal(m.value('metrics_master_coresUsed_Value'), 2);
  assert.equal(m.value('metrics_application_status_Value', { ...labels, state: 'RUNNING' }), 1);
  assert.equal(m.value('metrics_master_executors_Value', { state: 'RUNNING' }), 2);
  assert.ok(m.value('metrics_application_runtime_ms_Value', labels) > 0);
  assert.equal(m.value('metrics_master_status_Value', { status: 'ALIVE' }), 1);
  // The workers, the driver, this test's client and the web UI's own are connected.
  assert.ok(m.value('metrics_master_rpc_connections_Value', { direction: 'inbound' }) >= 4);

  // The worker's own view: one executor of one core and its memory.
  const state = await client.waitFor((s) => (workerIn(s, a.workerId)?.executors.length ?? 0) === 1);
  const w = await scrape(a.webUiUrl);
  assertCatalogued(w, 'worker');
  const aSummary = workerIn(state, a.workerId);
  for (const suffix of ['Number', 'Value']) {
    assert.equal(w.value(`metrics_worker_executors_${suffix}`), 1);
    assert.equal(w.value(`metrics_worker_coresUsed_${suffix}`), aSummary?.coresUsed);
    assert.equal(w.value(`metrics_worker_coresFree_${suffix}`), 2 - (aSummary?.coresUsed ?? 0));
    assert.equal(w.value(`metrics_worker_memUsed_MB_${suffix}`), aSummary?.memoryUsed);
    assert.equal(
      w.value(`metrics_worker_memFree_MB_${suffix}`),
      1024 - (aSummary?.memoryUsed ?? 0),
    );
  }
  assert.equal(w.value('metrics_worker_coresUsed_Value'), 1);
  assert.equal(w.value('metrics_worker_registered_Value'), 1);
  assert.equal(w.value('metrics_worker_cores_Value'), 2);

  // Worker B dies: the master's metrics follow.
  await b.kill('SIGKILL');
  await client.waitFor((s) => workerIn(s, b.workerId)?.state === 'DEAD');
  const after = await scrapeUntil(
    master.webUiUrl,
    (s) => s.value('metrics_master_aliveWorkers_Value') === 1,
  );
  assert.equal(after.value('metrics_master_aliveWorkers_Number'), 1);
  // Still listed, DEAD, as Spark lists it.
  assert.equal(after.value('metrics_master_workers_Value'), 2);
  assert.equal(after.value('metrics_master_cores_Value'), 2);
  // In one scrape, the cores in use are the ones granted, however far the rescheduling went.
  const granted = after.samples('metrics_application_cores_Value').reduce((n, x) => n + x.value, 0);
  assert.equal(after.value('metrics_master_coresUsed_Value'), granted);

  app.say('stop');
  const done = await client.waitFor((s) => appIn(s, appId)?.state === 'FINISHED');
  assert.equal(appIn(done, appId)?.state, 'FINISHED');
  const finished = await scrapeUntil(
    master.webUiUrl,
    (s) => s.value('metrics_master_apps_Value') === 0,
  );
  // A completed application the master retains keeps its series, with its final state.
  assert.equal(finished.value('metrics_master_completedApps_Value'), 1);
  assert.equal(
    finished.value('metrics_application_status_Value', { ...labels, state: 'FINISHED' }),
    1,
  );
  assert.equal(finished.value('metrics_application_cores_Value', labels), 0);
});
