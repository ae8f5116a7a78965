/**
 * A worker's metrics over a state built here (pure logic: what RequestWorkerState answers):
 * Spark's WorkerSource gauges, and what is not known yet is not written.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { workerMetricsRegistry } from '../../../backend/http/metrics/workerMetrics.js';
import { Scrape } from '../../helpers/prometheus.js';

const runner = (execId: number) => ({
  appId: 'app-1',
  execId,
  cores: 1,
  memory: 512,
  state: 'RUNNING' as const,
  dir: '/work/app-1/0',
});

const state = {
  type: 'WorkerStateResponse' as const,
  host: '127.0.0.1',
  port: 1,
  workerId: 'worker-1',
  cores: 4,
  memory: 2048,
  coresUsed: 2,
  memoryUsed: 1024,
  workDir: '/work',
  executors: [runner(0), runner(1)],
  finishedExecutors: [runner(2)],
  drivers: [],
  finishedDrivers: [],
};

test("WorkerSource's gauges with Spark's names; the registration; no RPC figures before attach", async () => {
  let registered = true;
  const registry = workerMetricsRegistry({
    state: async () => state,
    rpc: () => undefined,
    registered: () => registered,
  });
  const s = new Scrape(await registry.metrics());
  for (const suffix of ['Number', 'Value']) {
    assert.equal(s.value(`metrics_worker_executors_${suffix}`, { type: 'gauges' }), 2);
    assert.equal(s.value(`metrics_worker_coresUsed_${suffix}`), 2);
    assert.equal(s.value(`metrics_worker_coresFree_${suffix}`), 2);
    assert.equal(s.value(`metrics_worker_memUsed_MB_${suffix}`), 1024);
    assert.equal(s.value(`metrics_worker_memFree_MB_${suffix}`), 1024);
  }
  assert.equal(s.value('metrics_worker_drivers_Value'), 0);
  assert.equal(s.value('metrics_worker_registered_Value'), 1);
  assert.deepEqual(s.samples('metrics_worker_logFollows_Value'), []);
  assert.deepEqual(s.samples('metrics_worker_rpc_peers_Value'), []);
  registered = false;
  const later = new Scrape(await registry.metrics());
  assert.equal(later.value('metrics_worker_registered_Value'), 0);
});

test('a worker that cannot answer fails the scrape rather than reading as idle', async () => {
  const registry = workerMetricsRegistry({
    state: () => Promise.reject(new Error('ask timed out')),
    rpc: () => undefined,
    registered: () => true,
  });
  await assert.rejects(registry.metrics(), /ask timed out/);
});
