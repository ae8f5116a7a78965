/**
 * The master's metrics over a state built here (pure logic: what the web UI's mirror would hold),
 * and the per-application ones through an AppMetricsSource, the master's state's or one with jobs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AppMetrics,
  appMetricsFromMasterState,
} from '../../../backend/http/metrics/appMetrics.js';
import { masterMetricsRegistry } from '../../../backend/http/metrics/masterMetrics.js';
import type {
  AppSummary,
  ExecutorSummary,
  WorkerSummary,
} from '../../../backend/protocol/state.js';
import { Scrape } from '../../helpers/prometheus.js';

const NOW = 1_800_000_000_000;

function worker(
  id: string,
  state: WorkerSummary['state'],
  cores: number,
  used: number,
): WorkerSummary {
  return {
    id,
    host: '127.0.0.1',
    port: 1,
    webUiAddress: 'http://127.0.0.1:2',
    cores,
    coresUsed: used,
    memory: 1024,
    memoryUsed: used * 256,
    state,
    lastHeartbeat: NOW,
    executors: [],
    driverIds: [],
  };
}

function executor(appId: string, id: number, state: ExecutorSummary['state']): ExecutorSummary {
  return {
    appId,
    id,
    workerId: 'w1',
    workerHostPort: '127.0.0.1:1',
    cores: 1,
    memory: 256,
    state,
    history: [],
  };
}

function app(id: string, name: string, o: Partial<AppSummary>): AppSummary {
  return {
    id,
    name,
    user: 'u',
    coresGranted: 0,
    memoryPerExecutorMB: 256,
    state: 'WAITING',
    startTime: NOW - 5000,
    driver: { address: '127.0.0.1:3', name: 'Driver' },
    executors: [],
    removedExecutors: [],
    ...o,
  };
}

const state = {
  type: 'MasterStateResponse' as const,
  url: 'wick://127.0.0.1:7077',
  webUiUrl: 'http://127.0.0.1:8080',
  status: 'ALIVE' as const,
  seq: 1,
  workers: [worker('w1', 'ALIVE', 4, 3), worker('w2', 'ALIVE', 2, 0), worker('w3', 'DEAD', 8, 0)],
  activeApps: [
    app('app-1', 'Pi', {
      state: 'RUNNING',
      coresGranted: 3,
      executors: [executor('app-1', 0, 'RUNNING'), executor('app-1', 1, 'LAUNCHING')],
    }),
    app('app-2', 'Hungry', { state: 'WAITING' }),
  ],
  completedApps: [app('app-0', 'Old', { state: 'FINISHED', endTime: NOW - 1000 })],
  activeDrivers: [],
  completedDrivers: [],
};

async function scrape(
  apps = appMetricsFromMasterState(
    () => state,
    () => NOW,
  ),
): Promise<Scrape> {
  const registry = masterMetricsRegistry({
    state: () => state,
    rpc: () => ({ sockets: 4, inbound: 3, outbound: 1, peers: 4 }),
    apps: () => apps,
  });
  return new Scrape(await registry.metrics());
}

test("MasterSource's gauges, with Spark's names, and the cluster's totals over ALIVE workers", async () => {
  const s = await scrape();
  for (const suffix of ['Number', 'Value']) {
    assert.equal(s.value(`metrics_master_workers_${suffix}`), 3);
    assert.equal(s.value(`metrics_master_aliveWorkers_${suffix}`), 2);
    assert.equal(s.value(`metrics_master_apps_${suffix}`), 2);
    assert.equal(s.value(`metrics_master_waitingApps_${suffix}`), 1);
  }
  assert.equal(s.value('metrics_master_completedApps_Value'), 1);
  assert.equal(s.value('metrics_master_cores_Value'), 6);
  assert.equal(s.value('metrics_master_coresUsed_Value'), 3);
  assert.equal(s.value('metrics_master_memUsed_MB_Value'), 768);
  assert.equal(s.value('metrics_master_executors_Value', { state: 'RUNNING' }), 1);
  assert.equal(s.value('metrics_master_executors_Value', { state: 'LAUNCHING' }), 1);
  assert.equal(s.value('metrics_master_executors_Value', { state: 'LOST' }), 0);
  assert.equal(s.value('metrics_master_status_Value', { status: 'ALIVE' }), 1);
  assert.equal(s.value('metrics_master_status_Value', { status: 'STANDBY' }), 0);
  assert.equal(s.value('metrics_master_rpc_connections_Value', { direction: 'inbound' }), 3);
});

test('per application from the master state: retained apps only, no job series it cannot know', async () => {
  const s = await scrape();
  const cores = s.samples('metrics_application_cores_Value');
  assert.deepEqual(cores.map((c) => c.labels.application_id).sort(), ['app-0', 'app-1', 'app-2']);
  const pi = { application_id: 'app-1', application_name: 'Pi' };
  assert.equal(s.value('metrics_application_cores_Value', pi), 3);
  assert.equal(s.value('metrics_application_executors_Value', pi), 2);
  assert.equal(s.value('metrics_application_runtime_ms_Value', pi), 5000);
  assert.equal(s.value('metrics_application_runtime_ms_Value', { application_id: 'app-0' }), 4000);
  assert.equal(s.value('metrics_application_status_Value', { ...pi, state: 'RUNNING' }), 1);
  assert.equal(s.samples('metrics_application_status_Value', pi).length, 1);
  assert.deepEqual(s.samples('metrics_application_job_activeJobs_Value'), []);
  assert.deepEqual(s.samples('metrics_application_tasks_failedTasks_Count'), []);
});

test('a source that knows jobs, stages, tasks and shuffle bytes has them written', async () => {
  const withJobs: AppMetrics = {
    appId: 'app-1',
    name: 'Pi',
    state: 'RUNNING',
    coresGranted: 3,
    executors: 2,
    runtimeMs: 10,
    jobs: { active: 1, completed: 4, failed: 1 },
    stages: { active: 2, completed: 9, failed: 0 },
    tasks: { active: 3, completed: 400, failed: 2 },
    shuffle: { readBytes: 1024, writeBytes: 2048 },
  };
  const s = await scrape({ apps: () => [withJobs] });
  const pi = { application_id: 'app-1', application_name: 'Pi' };
  assert.equal(s.value('metrics_application_job_activeJobs_Value', pi), 1);
  assert.equal(s.value('metrics_application_jobs_succeededJobs_Count', pi), 4);
  assert.equal(s.value('metrics_application_jobs_failedJobs_Count', pi), 1);
  assert.equal(s.value('metrics_application_stage_runningStages_Value', pi), 2);
  assert.equal(s.value('metrics_application_stages_completedStages_Count', pi), 9);
  assert.equal(s.value('metrics_application_stages_failedStages_Count', pi), 0);
  assert.equal(s.value('metrics_application_tasks_activeTasks_Value', pi), 3);
  assert.equal(s.value('metrics_application_tasks_completedTasks_Count', pi), 400);
  assert.equal(s.value('metrics_application_tasks_failedTasks_Count', pi), 2);
  assert.equal(s.value('metrics_application_totalShuffleRead_Count', pi), 1024);
  assert.equal(s.value('metrics_application_totalShuffleWrite_Count', pi), 2048);
  assert.equal(s.family('metrics_application_tasks_failedTasks_Count').type, 'COUNTER');
});

test('an application name with quotes, backslashes and a newline survives as a label', async () => {
  const name = 'a "quoted" \\ name\nwith a newline';
  const s = await scrape({
    apps: () => [
      { appId: 'app-9', name, state: 'RUNNING', coresGranted: 1, executors: 1, runtimeMs: 1 },
    ],
  });
  assert.equal(s.value('metrics_application_cores_Value', { application_name: name }), 1);
});
