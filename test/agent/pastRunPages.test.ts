/**
 * A past run's pages and failed task, from its event log, through `wick agent` as the extension
 * starts it: one agent runs a job whose task fails to its end, and goes (as a window reload ends
 * it, with its local cluster); the next agent over the same runs folder answers that run's
 * /api/v1, its log and its failed task with no master at all (its own cluster stopped), so every
 * answer is read from the log. Real processes: two agents, two local clusters, a real driver.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  createMessageConnection,
  type MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { PastRunPages } from '../../backend/agent/pastRunPages.js';
import {
  Connect,
  Disconnect,
  FollowLog,
  LogFollowEnded,
  type MasterState,
  type PastRun,
  PastRunsChanged,
  RequestAppStatusApiOf,
  RequestLogRange,
  RequestPastRunFailedTask,
  RequestPastRunLog,
  StateChanged,
  SubmitApplication,
} from '../../backend/agent/protocol.js';
import { RunStore } from '../../backend/agent/runStore.js';
import { loggedRunPages } from '../../backend/cli/commands/loggedRunPages.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import { HistoryProvider } from '../../backend/history/HistoryProvider.js';
import type { AppSummary } from '../../backend/protocol/state.js';
import { appEvents } from '../history/appEvents.js';

const failTask = join(process.cwd(), 'test', 'fixtures', 'apps', 'failTask.ts');
const throwsAt =
  readFileSync(failTask, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes('THROWS HERE')) + 1;

/** `wick agent --stdio` and what it pushes; `until` waits for a push that satisfies `pred`. */
function startAgent(t: { after: (fn: () => void) => void }) {
  const child = spawn(process.execPath, [join('dist', 'wick.cjs'), 'agent', '--stdio'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  let state: MasterState | undefined;
  let runs: PastRun[] = [];
  const waiters = new Set<() => void>();
  const heard = () => {
    for (const w of [...waiters]) w();
  };
  conn.onNotification(StateChanged, (p) => {
    state = p.state ?? state;
    heard();
  });
  conn.onNotification(PastRunsChanged, (p) => {
    runs = p.runs;
    heard();
  });
  conn.listen();
  const until = <T>(pred: () => T | undefined): Promise<T> =>
    new Promise((resolve) => {
      const check = () => {
        const v = pred();
        if (v === undefined) return;
        waiters.delete(check);
        resolve(v);
      };
      waiters.add(check);
      check();
    });
  return {
    conn,
    until,
    state: () => state,
    runs: () => runs,
    exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))),
  };
}

async function connectLocal(conn: MessageConnection, runsDir: string): Promise<void> {
  await conn.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  const c = await conn.sendRequest(Connect, {
    master: 'local',
    localCluster: { workers: 1, cores: 2, memory: '1536m' },
    runsDir,
  });
  assert.equal(c.kind, 'connected', JSON.stringify(c));
}

test("a past run's /api/v1, log and failed task come from its event log, with no master", {
  timeout: 300_000,
}, async (t) => {
  const runsDir = mkdtempSync(join(tmpdir(), 'wick-past-run-'));
  t.after(() => rmSync(runsDir, { recursive: true, force: true }));

  // The first window's agent: the job fails in partition 2, and the agent goes.
  const first = startAgent(t);
  await connectLocal(first.conn, runsDir);
  const r = await first.conn.sendRequest(SubmitApplication, {
    file: failTask,
    args: [],
    deployMode: 'client',
    executorMemory: '256m',
    outputId: 'fail-1',
  });
  assert.ok(r.success && r.appId, JSON.stringify(r));
  const appId = r.appId as string;
  const failed = await first.until(() =>
    first.state()?.completedApps.find((a) => a.id === appId && a.state === 'FAILED'),
  );
  assert.match(failed.failure?.message ?? '', /bad record 50/);
  await first.conn.sendRequest('shutdown');
  await first.conn.sendNotification('exit');
  assert.equal(await first.exited, 0);

  // The next window's agent lists it, then stops its own cluster: nothing but the log is left.
  const next = startAgent(t);
  await connectLocal(next.conn, runsDir);
  const run = await next.until(() => next.runs().find((x) => x.appId === appId));
  assert.equal(run.state, 'FAILED');
  assert.ok(run.eventLog, 'the run has an event log');
  const d = await next.conn.sendRequest(Disconnect, { stopLocalCluster: true });
  assert.equal(d.kind, 'disconnected');

  const api = async (path: string) => {
    const a = await next.conn.sendRequest(RequestAppStatusApiOf, { path });
    assert.equal(a.status, 200, `${path}: ${a.body}`);
    return JSON.parse(a.body);
  };
  // Its job, as the job did: 3 tasks, one partition failing until the job failed.
  const [job, ...more] = await api(`/applications/${appId}/jobs`);
  assert.equal(more.length, 0);
  assert.equal(job.jobId, 0);
  assert.equal(job.status, 'FAILED');
  assert.equal(job.numTasks, 3);
  assert.ok(job.numFailedTasks >= 1, JSON.stringify(job));
  const [stageId] = job.stageIds as number[];
  const stage = await api(`/applications/${appId}/stages/${stageId}/0`);
  assert.equal(stage.status, 'FAILED');
  const tasks = (await api(`/applications/${appId}/stages/${stageId}/0/taskList?length=100`)) as {
    index: number;
    status: string;
    errorMessage?: string;
  }[];
  const failures = tasks.filter((x) => x.status === 'FAILED');
  assert.ok(failures.length >= 1);
  for (const f of failures) {
    assert.equal(f.index, 2, JSON.stringify(f));
    assert.match(f.errorMessage ?? '', /bad record 50/);
  }
  const [info] = (await api(`/applications/${appId}`)).attempts;
  assert.equal(info.completed, true);

  // Its log, for its page.
  const log = await next.conn.sendRequest(RequestPastRunLog, { appId });
  assert.equal(log.log?.appId, appId);
  assert.ok((log.log?.fileSize ?? 0) > 0);
  assert.match(log.log?.failure ?? '', /bad record 50/);

  // Its failed task, for Debug Failed Task: the partition and the user's line.
  const { task, reason } = await next.conn.sendRequest(RequestPastRunFailedTask, { appId });
  assert.ok(task, reason);
  assert.equal(task.partitionId, 2);
  assert.equal(task.stageId, stageId);
  assert.equal(task.jobId, 0);
  assert.ok(task.failures >= 1);
  assert.match(task.error, /bad record 50/);
  assert.ok(
    task.error.includes(`${failTask}:${throwsAt}:`),
    `the stack names ${failTask}:${throwsAt}: ${task.error}`,
  );

  // Its executor's log page, from the work dir the agent kept: read by range, whole, not followed.
  const stderr = await next.conn.sendRequest(RequestLogRange, {
    source: { appId, execId: 0 },
    stream: 'stderr',
    length: 1 << 20,
  });
  assert.ok(stderr.totalSize > 0);
  assert.match(Buffer.from(stderr.data, 'base64').toString(), /^Wick Executor Command: /);
  const head = await next.conn.sendRequest(RequestLogRange, {
    source: { appId, execId: 0 },
    stream: 'stderr',
    offset: 0,
    length: 4,
  });
  assert.deepEqual([Buffer.from(head.data, 'base64').toString(), head.offset], ['Wick', 0]);
  const ended = new Promise<{ totalSize: number; reason: string }>((resolve) =>
    next.conn.onNotification(LogFollowEnded, (p) => {
      if (p.followId === 'past-1') resolve(p);
    }),
  );
  const follow = await next.conn.sendRequest(FollowLog, {
    followId: 'past-1',
    source: { appId, execId: 0 },
    stream: 'stderr',
    offset: 0,
  });
  assert.equal(follow.totalSize, stderr.totalSize);
  assert.match((await ended).reason, /earlier session: its log is complete/);
  await assert.rejects(
    next.conn.sendRequest(RequestLogRange, {
      source: { appId, execId: 7 },
      stream: 'stdout',
      length: 10,
    }),
    /executor .*\/7: logs removed/,
  );
  await assert.rejects(
    next.conn.sendRequest(RequestLogRange, {
      source: { appId, execId: 0 },
      stream: 'passwd' as 'stdout',
      length: 10,
    }),
    /Invalid stream "passwd": expected stdout or stderr/,
  );

  // Only this folder's past runs: another id is refused as a value, and without a master its
  // /api/v1 is not asked of anyone.
  const other = await next.conn.sendRequest(RequestPastRunFailedTask, {
    appId: 'app-20260101000000-9999',
  });
  assert.equal(other.task, undefined);
  assert.match(other.reason ?? '', /not a run of an earlier local cluster/);
  const bad = await next.conn.sendRequest(RequestPastRunLog, { appId: '../etc/passwd' });
  assert.match(bad.reason ?? '', /Invalid application id "..\/etc\/passwd": expected app-/);
  await assert.rejects(
    next.conn.sendRequest(RequestAppStatusApiOf, {
      path: '/applications/app-20260101000000-9999/jobs',
    }),
    /Not connected to a master/,
  );
  await next.conn.sendRequest('shutdown');
  await next.conn.sendNotification('exit');
  assert.equal(await next.exited, 0);
});

test("only an earlier cluster's runs are answered from their logs; the running cluster's are its master's", async (t) => {
  const d = mkdtempSync(join(tmpdir(), 'wick-past-pages-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  const logs = join(d, 'event-logs');
  mkdirSync(logs);
  const past = 'app-20261207090000-0000';
  const live = 'app-20261207100000-0000';
  const cut = 'app-20261207090500-0001';
  const lines = (id: string) => appEvents(id).map((e) => `${JSON.stringify(e)}\n`);
  writeFileSync(join(logs, past), lines(past).join(''));
  writeFileSync(join(logs, live), lines(live).join(''));
  // A log cut inside job 1 (its failed task logged, not its end), the last line half written.
  const cutLines = lines(cut);
  const failedAt = cutLines.findIndex((l) => l.includes('"FAILED"'));
  writeFileSync(join(logs, cut), `${cutLines.slice(0, failedAt + 1).join('')}{"event":"Wick`);
  const runs = new RunStore(join(d, 'runs'), process.pid);
  const summary = (id: string, state: string) =>
    ({ id, name: id, state, startTime: 1, user: 'me' }) as unknown as AppSummary;
  const unlogged = 'app-20261207091000-0002';
  runs.observe(
    [summary(past, 'FAILED'), summary(cut, 'KILLED'), summary(unlogged, 'FINISHED')],
    runs.newClusterDir(1_000),
  );
  const current = runs.newClusterDir(2_000);
  runs.observe([summary(live, 'RUNNING')], current);
  let masterLists = '';
  const pages = new PastRunPages(
    runs,
    () => current,
    new HistoryProvider({ logDir: logs }),
    loggedRunPages(new WickConf()),
    (id) => id === masterLists,
  );

  assert.equal(pages.pastRunOfPath(`/applications/${past}/jobs`), past);
  assert.equal(pages.pastRunOfPath(`/applications/${past}`), past);
  assert.equal(pages.pastRunOfPath(`/applications/${live}/jobs`), undefined);
  assert.equal(pages.pastRunOfPath('/applications'), undefined);
  assert.equal(pages.pastRunOfPath(`/applications/${past}x/jobs`), undefined);
  // An id the master connected now lists is its own, as the panel shows it.
  masterLists = past;
  assert.equal(pages.pastRunOfPath(`/applications/${past}/jobs`), undefined);
  masterLists = '';

  const jobs = await pages.api(past, `/applications/${past}/jobs`);
  assert.equal(jobs.status, 200);
  assert.deepEqual(
    (JSON.parse(jobs.body) as { jobId: number; status: string }[]).map((j) => [j.jobId, j.status]),
    [
      [1, 'FAILED'],
      [0, 'SUCCEEDED'],
    ],
  );
  const failed = await pages.failedTask(past);
  assert.deepEqual(failed.task, {
    jobId: 1,
    stageId: 2,
    stageAttemptId: 0,
    partitionId: 0,
    taskId: 3,
    executorId: '0',
    failures: 1,
    error: 'Error: boom',
    jobError: 'Job aborted: Error: boom',
  });
  assert.equal((await pages.log(past)).log?.logName, past);

  // The cut log: its failed task was logged, its job's end was not; said, with where it broke.
  const fromCut = await pages.failedTask(cut);
  assert.equal(fromCut.task, undefined);
  assert.match(
    fromCut.reason ?? '',
    new RegExp(`No job of ${cut} failed because of a task.*read up to line ${failedAt + 2}`),
  );
  // A past run that logged nothing: its pages say so, naming the folder looked in.
  const none = await pages.api(unlogged, `/applications/${unlogged}/jobs`);
  assert.equal(none.status, 404);
  assert.match(
    JSON.parse(none.body).error,
    new RegExp(`No event log of ${unlogged} is in ${logs}`),
  );
  assert.match((await pages.failedTask(unlogged)).reason ?? '', /No event log of/);
  // The running cluster's run, and one nobody ran here: not the agent's to read.
  for (const id of [live, 'app-20260101000000-0000'])
    assert.match((await pages.log(id)).reason ?? '', /not a run of an earlier local cluster/);
});
