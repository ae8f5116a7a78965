/**
 * Spark's `/api/v1` on the master's web UI, against real processes: a master and 2 workers × 1
 * core, and a WickContext in this process as the driver, writing its event log. A WordCount
 * (reduceByKey: a map stage and a result stage over a shuffle) is checked field by field against
 * what it did; then a job whose tasks wait on a gate file is seen live (running job, active stage,
 * running tasks) both in the state the master pushes and in `/api/v1`; then, after the
 * application ended, the same routes answer from the store the master kept, and the driver's
 * event log replays into the same jobs and stages.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WickContext } from '../../backend/app/index.js';
import { findEventLog, replayEventLog } from '../../backend/appstatus/replayEventLog.js';
import { jobData } from '../../backend/appstatus/sparkApi.js';
import {
  executorsRegistered,
  type MasterState,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { waitFor } from '../helpers/processes.js';
import { uiFetch } from '../helpers/webUi.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

const dir = mkdtempSync(join(tmpdir(), 'wick-test-apiv1-'));
const logDir = join(dir, 'event-logs');
mkdirSync(logDir);
const APP_NAME = 'apiv1 wordcount';
const LINES = ['a b a', 'c a b', 'd d a', 'b c', 'a'];

let cluster: SharedCluster;
let wc: WickContext;
let appId: string;
let base: string;

// biome-ignore lint/suspicious/noExplicitAny: JSON as Spark writes it, read field by field.
type Json = any;

async function api(path: string, status = 200): Promise<Json> {
  const res = await uiFetch(`${base}${path}`);
  const body = await res.text();
  assert.equal(res.status, status, `GET ${path}: ${res.status} ${body}`);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  return JSON.parse(body);
}

const appOf = (s: MasterState) =>
  s.activeApps.find((a) => a.id === appId) ?? s.completedApps.find((a) => a.id === appId);

before(async () => {
  cluster = await startSharedCluster({ conf: { 'wick.eventLog.dir': logDir } });
  base = `${cluster.master.webUiUrl}/api/v1`;
  wc = await WickContext.create({
    master: cluster.url,
    appName: APP_NAME,
    conf: {
      'wick.eventLog.enabled': 'true',
      'wick.eventLog.dir': logDir,
      'wick.app.secretToken': 'hunter2',
    },
  });
  appId = wc.appId;
  await executorsRegistered(wc, 2);
});

after(async () => {
  await wc?.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a WordCount in /api/v1: one job, a map and a result stage, their tasks and shuffle', {
  timeout: 120_000,
}, async () => {
  const counts = await wc
    .parallelize(LINES, 3)
    .flatMap((line: string) => line.split(' '))
    .map((w: string): [string, number] => [w, 1])
    .reduceByKey((a: number, b: number) => a + b, 2)
    .collect();
  assert.deepEqual(new Map(counts).get('a'), 5);
  // Pushed by the master once the driver's report came: no polling of the API.
  await cluster.watch.waitFor((s) => appOf(s)?.progress?.jobs.succeeded === 1);

  const apps: Json[] = await api('/applications');
  const app = apps.find((a) => a.id === appId);
  assert.equal(app.name, APP_NAME);
  assert.equal(app.attempts.length, 1);
  assert.equal(app.attempts[0].completed, false);
  assert.equal(app.attempts[0].sparkUser.length > 0, true);
  assert.match(app.attempts[0].startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}GMT$/);
  assert.equal(
    new Date(app.attempts[0].startTime.replace('GMT', 'Z')).getTime(),
    app.attempts[0].startTimeEpoch,
  );
  assert.equal(app.attempts[0].endTimeEpoch, -1);
  assert.equal((await api(`/applications/${appId}`)).id, appId);

  const jobs: Json[] = await api(`/applications/${appId}/jobs`);
  assert.equal(jobs.length, 1);
  const [job] = jobs;
  assert.equal(job.status, 'SUCCEEDED');
  assert.equal(job.stageIds.length, 2);
  assert.equal(job.numTasks, 5, '3 map tasks and 2 reduce tasks');
  assert.equal(job.numCompletedTasks, 5);
  assert.equal(job.numFailedTasks, 0);
  assert.equal(job.numActiveTasks, 0);
  assert.equal(job.numCompletedStages, 2);
  assert.equal(job.numSkippedStages, 0);
  assert.ok(
    Date.parse(job.completionTime.replace('GMT', 'Z')) >=
      Date.parse(job.submissionTime.replace('GMT', 'Z')),
  );
  assert.deepEqual(await api(`/applications/${appId}/jobs/${job.jobId}`), job);
  assert.deepEqual(await api(`/applications/${appId}/jobs?status=succeeded`), jobs);
  assert.deepEqual(await api(`/applications/${appId}/jobs?status=running`), []);

  const stages: Json[] = await api(`/applications/${appId}/stages`);
  assert.deepEqual(stages.map((s) => s.stageId).sort(), [...job.stageIds].sort());
  const [mapId, resultId] = [...job.stageIds].sort((a: number, b: number) => a - b);
  const map = stages.find((s) => s.stageId === mapId);
  const result = stages.find((s) => s.stageId === resultId);
  for (const s of [map, result]) {
    assert.equal(s.status, 'COMPLETE');
    assert.equal(s.attemptId, 0);
    assert.equal(s.numFailedTasks, 0);
    assert.equal(s.numActiveTasks, 0);
    assert.deepEqual(s.jobIds, [job.jobId]);
    assert.ok(s.executorRunTime >= 0);
  }
  assert.equal(map.numTasks, 3);
  assert.equal(map.numCompleteTasks, 3);
  assert.ok(map.shuffleWriteBytes > 0, `map stage wrote ${map.shuffleWriteBytes} shuffle bytes`);
  assert.ok(map.shuffleWriteRecords > 0);
  assert.equal(map.shuffleReadBytes, 0);
  assert.equal(result.numTasks, 2);
  assert.equal(result.numCompleteTasks, 2);
  assert.equal(
    result.shuffleReadBytes,
    map.shuffleWriteBytes,
    'the reducers read what the maps wrote',
  );
  assert.equal(result.shuffleReadRecords, map.shuffleWriteRecords);
  assert.equal(result.shuffleWriteBytes, 0);

  const attempts: Json[] = await api(`/applications/${appId}/stages/${mapId}`);
  assert.equal(attempts.length, 1);
  const attempt = await api(`/applications/${appId}/stages/${mapId}/0`);
  assert.equal(Object.keys(attempt.tasks).length, 3);
  const tasks: Json[] = await api(`/applications/${appId}/stages/${mapId}/0/taskList`);
  assert.equal(tasks.length, 3);
  const execs: Json[] = await api(`/applications/${appId}/executors`);
  const execIds = new Set(execs.map((e) => e.id));
  assert.deepEqual(tasks.map((t) => t.index).sort(), [0, 1, 2]);
  for (const t of tasks) {
    assert.equal(t.status, 'SUCCESS');
    assert.equal(t.attempt, 0);
    assert.ok(execIds.has(t.executorId), `task ${t.taskId} ran on ${t.executorId}`);
    assert.equal(t.host, execs.find((e) => e.id === t.executorId).hostPort);
    assert.ok(t.taskMetrics.shuffleWriteMetrics.bytesWritten > 0);
  }
  assert.deepEqual(
    tasks.map((t) => t.taskId),
    [...tasks.map((t) => t.taskId)].sort((a, b) => a - b),
    'sorted by ID by default',
  );
  const paged: Json[] = await api(
    `/applications/${appId}/stages/${mapId}/0/taskList?offset=1&length=1&sortBy=ID`,
  );
  assert.deepEqual(paged, [tasks[1]]);
  const slowest: Json[] = await api(
    `/applications/${appId}/stages/${mapId}/0/taskList?sortBy=-runtime`,
  );
  assert.deepEqual(
    slowest.map((t) => t.duration),
    tasks.map((t) => t.duration).sort((a, b) => b - a),
  );

  assert.equal(execs.length, 2);
  assert.equal(
    execs.reduce((n, e) => n + e.completedTasks, 0),
    5,
    'every task counted on its executor',
  );
  for (const e of execs) {
    assert.equal(e.isActive, true);
    assert.equal(e.totalCores, 1);
  }
  assert.ok(execs.reduce((n, e) => n + e.totalShuffleWrite, 0) === map.shuffleWriteBytes);
  assert.deepEqual(await api(`/applications/${appId}/allexecutors`), execs);

  const env = await api(`/applications/${appId}/environment`);
  const props = new Map<string, string>(env.sparkProperties);
  assert.equal(props.get('wick.app.name'), APP_NAME);
  assert.equal(props.get('wick.app.secretToken'), '*********(redacted)');
  assert.equal(env.runtime.nodeVersion, process.version);

  // What it does not know, it says by name.
  assert.deepEqual(await api('/applications/app-nope/jobs', 404), {
    error: 'unknown app: app-nope',
  });
  assert.deepEqual(await api(`/applications/${appId}/jobs/999`, 404), {
    error: 'unknown job: 999',
  });
  assert.deepEqual(await api(`/applications/${appId}/stages/999`, 404), {
    error: 'unknown stage: 999',
  });
  assert.deepEqual(await api(`/applications/${appId}/stages/${mapId}/7/taskList`, 404), {
    error: `unknown attempt 7 of stage ${mapId}`,
  });
  assert.match(
    (await api(`/applications/${appId}/stages/${mapId}/0/taskList?sortBy=size`, 400)).error,
    /sortBy="size": expected ID, runtime or -runtime/,
  );
  // Authenticated as the rest of the UI.
  const anon = await fetch(`${base}/applications`, { redirect: 'manual' });
  assert.notEqual(anon.status, 200);
  await anon.body?.cancel();
});

test('a job that waits is seen live: pushed by the master, and in /api/v1', {
  timeout: 120_000,
}, async () => {
  const gate = join(dir, 'gate');
  const result = wc
    .parallelize([1, 2], 2)
    .map(
      (x: number, env: { gate: string }) => {
        const fs = require('node:fs');
        const nap = new Int32Array(new SharedArrayBuffer(4));
        while (!fs.existsSync(env.gate)) Atomics.wait(nap, 0, 0, 10);
        return x * 10;
      },
      { gate },
    )
    .collect();
  const live = await cluster.watch.waitFor(
    (s) => appOf(s)?.progress?.activeStages[0]?.counts.numActiveTasks === 2,
  );
  const progress = appOf(live)?.progress;
  assert.equal(progress?.jobs.active, 1);
  assert.equal(progress?.activeJobs[0]?.counts.numTasks, 2);

  const running: Json[] = await api(`/applications/${appId}/jobs?status=running`);
  assert.equal(running.length, 1);
  assert.equal(running[0].numActiveTasks, 2);
  assert.equal(running[0].completionTime, undefined);
  const [stage] = await api(`/applications/${appId}/stages?status=active`);
  assert.equal(stage.status, 'ACTIVE');
  assert.equal(stage.numActiveTasks, 2);
  const tasks: Json[] = await api(
    `/applications/${appId}/stages/${stage.stageId}/${stage.attemptId}/taskList`,
  );
  assert.deepEqual(
    tasks.map((t) => t.status),
    ['RUNNING', 'RUNNING'],
  );
  assert.ok(tasks.every((t) => t.duration === undefined && t.taskMetrics === undefined));

  writeFileSync(gate, '');
  assert.deepEqual(await result, [10, 20]);
  await cluster.watch.waitFor((s) => appOf(s)?.progress?.jobs.succeeded === 2);
  const all: Json[] = await api(`/applications/${appId}/jobs`);
  assert.deepEqual(
    all.map((j) => j.status),
    ['SUCCEEDED', 'SUCCEEDED'],
  );
  assert.equal(all[0].jobId > all[1].jobId, true, 'the most recent first, as Spark lists them');
});

test('after the application ended: the kept store answers, and its event log replays the same', {
  timeout: 120_000,
}, async () => {
  const before: Json[] = await api(`/applications/${appId}/jobs`);
  await wc.stop();
  await cluster.watch.waitFor(
    (s) => s.completedApps.some((a) => a.id === appId) && appOf(s)?.progress !== undefined,
  );
  // The application's end: from its driver's last report, or the master's own.
  const app: Json = (await api('/applications')).find((a: Json) => a.id === appId);
  assert.equal(app.attempts[0].completed, true);
  assert.ok(app.attempts[0].endTimeEpoch >= app.attempts[0].startTimeEpoch);
  assert.equal(
    app.attempts[0].duration,
    app.attempts[0].endTimeEpoch - app.attempts[0].startTimeEpoch,
  );
  assert.deepEqual(await api(`/applications/${appId}/jobs`), before);
  const execs: Json[] = await api(`/applications/${appId}/allexecutors`);
  assert.equal(execs.length, 2);

  assert.ok(await findEventLog(logDir, appId), `no event log of ${appId} in ${logDir}`);
  // stop() returns before the driver's verdict, and so before the log's ApplicationEnd is
  // written and the log renamed from ….inprogress (WickContext.close): it is found and read
  // again until it says the application ended.
  const replayed = await waitFor(
    'the event log to end with the application',
    async () => {
      const found = await findEventLog(logDir, appId);
      const r = found && (await replayEventLog(found.path));
      return r?.completed && r;
    },
    30_000,
  );
  assert.equal(replayed.completed, true);
  assert.equal(replayed.skipped, 0);
  assert.deepEqual(replayed.problems, []);
  assert.deepEqual(
    JSON.parse(JSON.stringify(replayed.store.jobList().map(jobData))),
    before,
    'the log gives the jobs the master showed',
  );
});
