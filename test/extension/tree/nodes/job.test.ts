import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState, PastRun } from '../../../../backend/agent/protocol.js';
import { children, item, type Model, type Node, roots } from '../../../../extension/tree/model.js';

const counts = (done: number, active: number, total: number, failed = 0) => ({
  numTasks: total,
  numActiveTasks: active,
  numCompletedTasks: done,
  numFailedTasks: failed,
  numKilledTasks: 0,
});

const app = (id: string, state: string, extra = {}) => ({
  id,
  name: 'Word Count',
  user: 'me',
  coresGranted: 2,
  memoryPerExecutorMB: 512,
  state,
  startTime: 1_000,
  driver: { address: '127.0.0.1:5000', name: 'AppClient' },
  executors: [],
  removedExecutors: [],
  ...extra,
});

const progress = {
  jobs: { active: 1, succeeded: 2, failed: 0 },
  stages: { active: 2, complete: 3, failed: 0 },
  activeJobs: [{ jobId: 2, submissionTime: 2_000, stageIds: [3, 4], counts: counts(10, 4, 40) }],
  activeStages: [
    {
      stageId: 3,
      attemptId: 0,
      name: 'map at wc.ts:8',
      submissionTime: 2_000,
      counts: counts(10, 2, 20),
    },
    {
      stageId: 4,
      attemptId: 1,
      name: 'reduceByKey at wc.ts:9',
      submissionTime: 3_000,
      counts: counts(0, 2, 20, 1),
    },
    { stageId: 9, attemptId: 0, name: 'orphan', submissionTime: 3_000, counts: counts(0, 0, 1) },
  ],
  lastUpdated: 4_000,
};

function model(state: Partial<MasterState>, pastRuns: PastRun[] = []): Model {
  const s = {
    url: 'wick://127.0.0.1:7077',
    webUiUrl: 'http://127.0.0.1:8080',
    status: 'ALIVE',
    workers: [],
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
    seq: 1,
    ...state,
  } as MasterState;
  return {
    connection: { kind: 'connected', url: s.url, webUiUrl: s.url, local: true },
    state: s,
    now: 12_000,
    pastRuns,
  };
}

const appNode = (m: Model, group: 'running' | 'completed') => {
  const g = roots('applications', m).find((n) => n.kind === 'group' && n.group === group);
  return children(g as Node, m);
};

test("a running app's rows: its running jobs, each with its running stages and their task counts", () => {
  const m = model({
    activeApps: [app('app-1', 'RUNNING', { progress })] as MasterState['activeApps'],
  });
  const [a] = appNode(m, 'running');
  const rows = children(a as Node, m);
  assert.deepEqual(
    rows.map((n) => item(n, m).label),
    ['Job 2', 'Stage 9: orphan'],
    'the job, then a stage no listed job names',
  );
  const job = item(rows[0] as Node, m);
  assert.equal(job.description, '25% · 10/40 tasks · 4 running · 10s');
  assert.equal(job.collapsible, 'expanded');
  assert.equal(job.id, 'job:app-1:2');
  const stages = children(rows[0] as Node, m).map((n) => item(n, m));
  assert.deepEqual(
    stages.map((s) => [s.id, s.label, s.description, s.icon?.id]),
    [
      [
        'stage:app-1:3:0',
        'Stage 3: map at wc.ts:8',
        '50% · 10/20 tasks · 2 running',
        'loading~spin',
      ],
      [
        'stage:app-1:4:1',
        'Stage 4 (attempt 1): reduceByKey at wc.ts:9',
        '0% · 0/20 tasks · 2 running · 1 failed',
        'warning',
      ],
    ],
  );
  assert.match(
    item(a as Node, m).tooltip ?? '',
    /Jobs: 1 running \(job 2: 10\/40 tasks · 4 running\), 2 succeeded, 0 failed/,
  );
});

test('a finished app shows no jobs (its progress is history), a failed one its failure first, one click away', () => {
  const failure = {
    message: 'Error: bad word',
    stack: 'Error: bad word\n    at /w/wc.ts:12:5',
    location: { file: '/w/wc.ts', line: 12, column: 5 },
    task: { stageId: 3, partitionId: 1 },
  };
  const m = model({
    completedApps: [
      app('app-1', 'FINISHED', { progress, endTime: 5_000 }),
      app('app-2', 'FAILED', { failure, endTime: 6_000 }),
    ] as MasterState['completedApps'],
  });
  const [failed, finished] = appNode(m, 'completed');
  assert.deepEqual(children(finished as Node, m), []);
  const [f] = children(failed as Node, m);
  const it = item(f as Node, m);
  assert.equal(it.label, 'Error: bad word');
  assert.equal(it.description, 'task of stage 3, partition 1 · wc.ts:12:5');
  assert.equal(it.command?.command, 'wick.showFailedTask');
  assert.equal(it.contextValue, 'wick.failure.task');
});

const past = (over: Partial<PastRun> = {}): PastRun => ({
  appId: 'app-old',
  name: 'until killed',
  state: 'KILLED',
  startTime: 1_000,
  endTime: 9_000,
  message: 'the window reloaded or closed while it ran',
  logs: { dir: '/gone/app-old', removed: true, files: [] },
  ...over,
});

test('past runs come after the live completed apps, with why they ended, and "logs removed" when gone', () => {
  const m = model(
    {
      completedApps: [app('app-1', 'FINISHED', { endTime: 5_000 })] as MasterState['completedApps'],
    },
    [past(), past({ appId: 'app-1', name: 'also live' })],
  );
  const group = roots('applications', m).find((n) => n.kind === 'group' && n.group === 'completed');
  assert.equal(item(group as Node, m).description, '2', 'a past run also live is counted once');
  const [live, run] = appNode(m, 'completed');
  assert.equal(live?.kind, 'app');
  const it = item(run as Node, m);
  assert.equal(it.label, 'until killed');
  assert.equal(
    it.description,
    'KILLED: the window reloaded or closed while it ran · earlier session · app-old',
  );
  assert.equal(it.contextValue, 'wick.run.killed');
  const rows = children(run as Node, m).map((n) => item(n, m, it.id));
  assert.deepEqual(
    rows.map((r) => [r.label, r.icon?.id]),
    [['logs removed', 'info']],
  );
});

test("a past run's kept files open from its rows; a removed output says so; its failure is a row", () => {
  const run = past({
    state: 'FAILED',
    message: undefined,
    failure: { message: 'Error: x' },
    output: { path: '/keep/outputs/o1.log', exists: true },
    logs: {
      dir: '/keep/c/app-old',
      removed: false,
      files: [
        { execId: 0, stream: 'stdout', path: '/keep/c/app-old/0/stdout' },
        { execId: 0, stream: 'stderr', path: '/keep/c/app-old/0/stderr' },
      ],
    },
  });
  const m = model({}, [run]);
  const [node] = appNode(m, 'completed');
  assert.match(item(node as Node, m).description ?? '', /^FAILED · 8s · earlier session/);
  const rows = children(node as Node, m).map((n) => item(n, m, 'run:app-old'));
  assert.deepEqual(
    rows.map((r) => [r.label, r.command?.command]),
    [
      ['Error: x', 'wick.showFailedTask'],
      ['driver output', 'wick.openRunFile'],
      ['executor 0 · stdout', 'wick.openRunFile'],
      ['executor 0 · stderr', 'wick.openRunFile'],
    ],
  );
  const gone = model({}, [past({ output: { path: '/x', exists: false } })]);
  const [n2] = appNode(gone, 'completed');
  assert.deepEqual(
    children(n2 as Node, gone).map((n) => item(n, gone).label),
    ['driver output removed', 'logs removed'],
  );
});

test('the state filter applies to past runs as to live ones', () => {
  const m = {
    ...model({}, [past(), past({ appId: 'app-f', state: 'FINISHED', message: undefined })]),
    filter: { states: ['FINISHED'] },
  };
  assert.deepEqual(
    appNode(m, 'completed').map((n) => (n.kind === 'run' ? n.run.appId : '')),
    ['app-f'],
  );
});
