/**
 * The Executor on its real thread pool (dist/task-worker.cjs: run `npm run build` first), with
 * tasks launched in one turn so that one thread runs them as a batch. A task that must be running
 * when it is killed writes a "started" file and waits for a "go" file the test writes, so nothing
 * depends on timing; the quick tasks before it may have had their outcomes posted or still held
 * by the thread when the kill comes, and either way each task must end exactly once, as itself.
 * The last tests play the threads themselves (ScriptedPool), to decide when a thread closes its
 * batch relative to the tasks the executor adds to it.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BroadcastChannel, type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { Executor } from '../../../backend/app/executor/Executor.js';
import type { TaskReport } from '../../../backend/app/executor/StatusReporter.js';
import type { TaskPool } from '../../../backend/app/executor/taskPool.js';
import {
  AVAILABLE,
  BATCH_CLOSED,
  type BatchAdd,
  type BatchReport,
  CLAIMED,
  ENDED,
  RECEIVED,
  type TaskBatchRequest,
} from '../../../backend/app/task/taskWorker.js';
import type { TaskDescription } from '../../../backend/protocol/task.js';
import { waitFor } from '../../helpers/processes.js';

/** How long a step may take here before the test fails naming it. */
const DEADLINE = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'wick-test-executor-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Maps each element to itself; the element "block" first waits for `go` (see the file's note). */
function blockingMap(name: string): string {
  const started = JSON.stringify(join(dir, `${name}.started`));
  const go = JSON.stringify(join(dir, `${name}.go`));
  return `(x) => {
    if (x === 'block') {
      const fs = require('node:fs');
      fs.writeFileSync(${started}, '');
      while (!fs.existsSync(${go})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
    return x;
  }`;
}

function tasks(name: string, elements: string[], source = blockingMap(name)): TaskDescription[] {
  return elements.map((e, i) => ({
    taskId: i,
    jobId: 0,
    stageId: 0,
    partition: i,
    attempt: 0,
    source: { kind: 'array', data: [e] },
    transformations: [{ kind: 'map', fn: { source } }],
    action: { kind: 'collect' },
  }));
}

/** Each task's ends (FINISHED, FAILED, KILLED) with their results, by task id. */
function ends(reports: TaskReport[]): Map<number, string[]> {
  const m = new Map<number, string[]>();
  for (const r of reports) {
    if (r.state === 'RUNNING') continue;
    const e = r.state === 'FINISHED' ? `FINISHED ${JSON.stringify(r.result)}` : r.state;
    m.set(r.taskId, [...(m.get(r.taskId) ?? []), e]);
  }
  return m;
}

/** ends(), as [taskId, ends] pairs in task order. */
function endsByTask(reports: TaskReport[]): [number, string[]][] {
  return [...ends(reports)].sort((x, y) => x[0] - y[0]);
}

/** A task launched after the others, whose end shows that the executor has run all before it. */
const SENTINEL = 999;

/**
 * Every task's ends once `count` tasks have ended, checked once a task launched after that has
 * ended too: a lost outcome run again would have shown as a second end by then, since with one
 * core the executor runs what it holds oldest first, a task to run again ahead of what waits.
 * The reports held are sent first.
 */
async function settledEnds(
  executor: Executor,
  reports: TaskReport[],
  count: number,
): Promise<[number, string[]][]> {
  await waitFor('every task to end', () => ends(reports).size === count, DEADLINE);
  const [sentinel] = tasks('sentinel', ['sentinel'], '(x) => x');
  executor.launchTask({ ...(sentinel as TaskDescription), taskId: SENTINEL, partition: SENTINEL });
  await waitFor('a task launched after them to end', () => ends(reports).has(SENTINEL), DEADLINE);
  executor.flushReports();
  assert.deepEqual(ends(reports).get(SENTINEL), ['FINISHED ["sentinel"]']);
  return endsByTask(reports).filter(([id]) => id !== SENTINEL);
}

/** An executor of `cores` cores on the real thread pool, or on `pool`. */
async function withExecutor(
  fn: (e: Executor, reports: TaskReport[], log: () => string) => Promise<void>,
  { cores = 1, pool, memoryMB }: { cores?: number; pool?: ScriptedPool; memoryMB?: number } = {},
) {
  const reports: TaskReport[] = [];
  let log = '';
  const executor = new Executor(
    'exec-test',
    cores,
    { appDir: dir },
    (r) => reports.push(r),
    (text) => {
      log += text;
    },
    memoryMB,
    pool as TaskPool | undefined,
  );
  try {
    await fn(executor, reports, () => log);
  } finally {
    await executor.stop();
  }
}

test('killing the running task of a batch ends it KILLED; the batch’s other tasks each finish once', async () => {
  await withExecutor(async (executor, reports) => {
    const ts = tasks('kill-running', ['a', 'b', 'block', 'c']);
    for (const t of ts) executor.launchTask(t);
    await waitFor(
      'the blocking task to start',
      () => existsSync(join(dir, 'kill-running.started')),
      DEADLINE,
    );
    executor.killTask(2, 'its job was aborted');
    assert.deepEqual(await settledEnds(executor, reports, 4), [
      [0, ['FINISHED ["a"]']],
      [1, ['FINISHED ["b"]']],
      [2, ['KILLED']],
      [3, ['FINISHED ["c"]']],
    ]);
  });
});

test('killing a task of a batch that has already ended leaves its outcome as it was', async () => {
  await withExecutor(async (executor, reports) => {
    const ts = tasks('kill-ended', ['a', 'b', 'block', 'c']);
    for (const t of ts) executor.launchTask(t);
    await waitFor(
      'the blocking task to start',
      () => existsSync(join(dir, 'kill-ended.started')),
      DEADLINE,
    );
    // Task 0 has ended (its thread is at task 2), whether or not its outcome has come yet.
    executor.killTask(0, 'its job was aborted');
    writeFileSync(join(dir, 'kill-ended.go'), '');
    assert.deepEqual(await settledEnds(executor, reports, 4), [
      [0, ['FINISHED ["a"]']],
      [1, ['FINISHED ["b"]']],
      [2, ['FINISHED ["block"]']],
      [3, ['FINISHED ["c"]']],
    ]);
  });
});

test('a kill ifNotStarted takes queued tasks back, KILLED and sent at once, and lets the running one finish', async () => {
  await withExecutor(async (executor, reports) => {
    const ts = tasks('take-back', ['a', 'block', 'c', 'd', 'e']);
    // a to d go to the thread as one batch; e comes later and waits here for the thread.
    for (const t of ts.slice(0, 4)) executor.launchTask(t);
    await waitFor(
      'the blocking task to start',
      () => existsSync(join(dir, 'take-back.started')),
      DEADLINE,
    );
    executor.launchTask(ts[4] as TaskDescription);
    executor.killTask(1, 'taken back', true);
    executor.killTask(3, 'taken back', true);
    executor.killTask(4, 'taken back', true);
    // Sent at the end of this turn, without a flush: the driver waits on these.
    await waitFor(
      'the tasks taken back to be reported',
      () => {
        const e = ends(reports);
        return e.has(3) && e.has(4);
      },
      DEADLINE,
    );
    // Task a's outcome may still be held by the thread, which is at task block.
    assert.deepEqual(
      endsByTask(reports).filter(([id]) => id !== 0),
      [
        [3, ['KILLED']],
        [4, ['KILLED']],
      ],
    );
    writeFileSync(join(dir, 'take-back.go'), '');
    assert.deepEqual(await settledEnds(executor, reports, 5), [
      [0, ['FINISHED ["a"]']],
      [1, ['FINISHED ["block"]']],
      [2, ['FINISHED ["c"]']],
      [3, ['KILLED']],
      [4, ['KILLED']],
    ]);
  });
});

test('a kill ifNotStarted of a task its thread has not reached ends it KILLED; the rest of the batch runs in the next one', async () => {
  await withExecutor(async (executor, reports) => {
    const ts = tasks('take-back-queued', ['a', 'block', 'c', 'd', 'e']);
    // All five go to the thread as one batch; it stops at block.
    for (const t of ts) executor.launchTask(t);
    await waitFor(
      'the blocking task to start',
      () => existsSync(join(dir, 'take-back-queued.started')),
      DEADLINE,
    );
    // As the driver takes back the last of a queue: d first, while c and e are still in the batch.
    executor.killTask(3, 'taken back', true);
    await waitFor('d to be reported', () => ends(reports).has(3), DEADLINE);
    writeFileSync(join(dir, 'take-back-queued.go'), '');
    assert.deepEqual(await settledEnds(executor, reports, 5), [
      [0, ['FINISHED ["a"]']],
      [1, ['FINISHED ["block"]']],
      [2, ['FINISHED ["c"]']],
      [3, ['KILLED']],
      [4, ['FINISHED ["e"]']],
    ]);
  });
});

test('a batch’s outcomes all come, in order; each task logs Running before Finished, and a RUNNING report, when sent, comes before its end', async () => {
  await withExecutor(async (executor, reports, log) => {
    const ts = tasks('batch', ['a', 'b', 'c', 'd', 'e', 'f']);
    for (const t of ts) executor.launchTask(t);
    await waitFor('every task to end', () => ends(reports).size === 6, DEADLINE);
    executor.flushReports();
    const order = reports.map((r) => `${r.taskId} ${r.state}`);
    const text = log();
    for (const t of ts) {
      const running = order.indexOf(`${t.taskId} RUNNING`);
      const finished = order.indexOf(`${t.taskId} FINISHED`);
      assert.ok(running < finished, `task ${t.taskId}: ${order.join(', ')}`);
      const runLine = text.indexOf(`Running task ${t.partition}.0 in stage 0.0 (TID ${t.taskId})`);
      const endLine = text.indexOf(`Finished task ${t.partition}.0 in stage 0.0 (TID ${t.taskId})`);
      assert.ok(runLine >= 0 && runLine < endLine, `task ${t.taskId}'s lines:\n${text}`);
    }
    const finishedOrder = reports.filter((r) => r.state === 'FINISHED').map((r) => r.taskId);
    assert.deepEqual(finishedOrder, [0, 1, 2, 3, 4, 5]);
  });
});

test('in a batch, a task whose result cannot be sent back fails alone; the others finish', async () => {
  await withExecutor(async (executor, reports) => {
    const ts = tasks('uncloneable', ['a', 'fn', 'c'], `(x) => (x === 'fn' ? () => x : x)`);
    for (const t of ts) executor.launchTask(t);
    await waitFor('every task to end', () => ends(reports).size === 3, DEADLINE);
    executor.flushReports();
    assert.deepEqual(endsByTask(reports), [
      [0, ['FINISHED ["a"]']],
      [1, ['FAILED']],
      [2, ['FINISHED ["c"]']],
    ]);
    const failed = reports.find((r) => r.state === 'FAILED');
    assert.match(failed?.error?.message ?? '', /could not be cloned/);
  });
});

/**
 * A pool whose "threads" the test plays (pure logic: when the executor hands over, adds, or
 * refuses): each run is recorded with its request, and ends when the test ends it, as a thread's
 * last report ends its batch.
 */
class ScriptedPool extends EventEmitter {
  readonly addsChannel = `wick-test-adds-${process.pid}-${Math.random()}`;
  /** The threads' side of the adds channel (every thread reads every add), as it delivers them. */
  private readonly adds = new BroadcastChannel(this.addsChannel);
  private readonly added: BatchAdd[] = [];

  constructor() {
    super();
    this.adds.onmessage = (e) => this.added.push((e as { data: BatchAdd }).data);
  }
  readonly runs: { req: TaskBatchRequest; end: (ran: number) => void; fail: (e: Error) => void }[] =
    [];

  run(req: TaskBatchRequest): Promise<number> {
    // A thread gets a copy, as piscina's message makes one; it says it has the batch at once.
    const copy = { ...req, tasks: [...req.tasks] };
    Atomics.store(copy.control, RECEIVED, 1);
    return new Promise((resolve, fail) =>
      this.runs.push({
        req: copy,
        end: (ran) => {
          this.emit('message', { wickBatch: req.batch, outcomes: [], ran } satisfies BatchReport);
          resolve(ran);
        },
        fail,
      }),
    );
  }

  /** As piscina's: the runs still going fail. */
  async destroy(): Promise<void> {
    for (const r of this.runs) r.fail(new Error('Terminating worker thread'));
    this.adds.close();
  }

  /**
   * The tasks of run i, with those added to it since: read off the adds channel, each add to its
   * batch's run as that thread does until it closes the batch.
   */
  tasksOf(i: number): number[] {
    const adds = this.adds as unknown as MessagePort;
    for (let m = receiveMessageOnPort(adds); m; m = receiveMessageOnPort(adds))
      this.added.push(m.message as BatchAdd);
    for (const add of this.added.splice(0)) {
      const run = this.runs.find((r) => r.req.batch === add.batch);
      if (run && (Atomics.load(run.req.control, AVAILABLE) & BATCH_CLOSED) === 0)
        run.req.tasks.push(...add.tasks);
    }
    const { req } = this.runs[i] as ScriptedPool['runs'][number];
    return req.tasks.map((t) => t.taskId);
  }

  /** Run i's thread runs all its tasks, posts their outcomes, and closes the batch. */
  finish(i: number): void {
    const { req } = this.runs[i] as ScriptedPool['runs'][number];
    const n = this.tasksOf(i).length;
    Atomics.store(req.control, CLAIMED, n);
    Atomics.store(req.control, ENDED, n);
    this.emit('message', {
      wickBatch: req.batch,
      outcomes: req.tasks.map((t, index) => ({
        index,
        outcome: { ok: true, result: t.taskId },
        durationMs: 1,
      })),
    } satisfies BatchReport);
    assert.equal(Atomics.compareExchange(req.control, AVAILABLE, n, n | BATCH_CLOSED), n);
  }
}

const tick = () => new Promise((r) => setImmediate(r));

test('tasks launched while a batch runs are added to it; once its thread has closed it, they start the next batch', async () => {
  const pool = new ScriptedPool();
  await withExecutor(
    async (executor, reports) => {
      const ts = tasks('scripted', ['a', 'b', 'c', 'd']);
      executor.launchTask(ts[0] as TaskDescription);
      await tick();
      executor.launchTask(ts[1] as TaskDescription);
      executor.launchTask(ts[2] as TaskDescription);
      await tick();
      assert.equal(pool.runs.length, 1, 'a second batch started while the first ran');
      assert.deepEqual(pool.tasksOf(0), [0, 1, 2]);
      // The thread runs out of tasks and closes its batch before the executor hears of it.
      pool.finish(0);
      executor.launchTask(ts[3] as TaskDescription);
      await tick();
      assert.deepEqual(pool.tasksOf(0), [0, 1, 2], 'a task was added to a closed batch');
      assert.equal(pool.runs.length, 1);
      (pool.runs[0] as ScriptedPool['runs'][number]).end(3);
      await tick();
      assert.equal(pool.runs.length, 2, 'the task refused did not start a batch of its own');
      assert.deepEqual(pool.tasksOf(1), [3]);
      pool.finish(1);
      (pool.runs[1] as ScriptedPool['runs'][number]).end(1);
      await tick();
      executor.flushReports();
      assert.deepEqual(endsByTask(reports), [
        [0, ['FINISHED 0']],
        [1, ['FINISHED 1']],
        [2, ['FINISHED 2']],
        [3, ['FINISHED 3']],
      ]);
    },
    { pool },
  );
});

test('with two threads, tasks launched are added to the batch with the fewest tasks not started', async () => {
  const pool = new ScriptedPool();
  await withExecutor(
    async (executor) => {
      const ts = tasks('two-threads', ['a', 'b', 'c', 'd', 'e']);
      executor.launchTask(ts[0] as TaskDescription);
      executor.launchTask(ts[1] as TaskDescription);
      await tick();
      assert.deepEqual([pool.tasksOf(0), pool.tasksOf(1)], [[0], [1]]);
      // The first thread has started its task; the second has not started its own yet.
      Atomics.store((pool.runs[0] as ScriptedPool['runs'][number]).req.control, CLAIMED, 1);
      for (const t of ts.slice(2)) executor.launchTask(t);
      await tick();
      assert.deepEqual(
        [pool.tasksOf(0), pool.tasksOf(1)],
        [
          [0, 2, 3],
          [1, 4],
        ],
      );
    },
    { cores: 2, pool },
  );
});

test('a task that fills its thread’s heap fails as out of memory, naming the heap and the setting; the executor runs the next task', async () => {
  await withExecutor(
    async (executor, reports) => {
      // Many arrays of 10,000 elements, not one array pushed to forever: Node ends a thread at its
      // heap limit reliably only for the first shape; one ever-growing array can abort the whole
      // process instead (nodejs/node#47224, the caveat of nodejs/node#65019), as it did here
      // once under load, taking the test process with it.
      const [hog] = tasks(
        'hog',
        ['x'],
        '(x) => { const a = []; for (;;) a.push(new Array(10000).fill(x)); }',
      );
      const [after] = tasks('after', ['after'], '(x) => x');
      executor.launchTask({ ...(hog as TaskDescription), taskId: 7, partition: 3, stageId: 2 });
      await waitFor('the task to fail', () => ends(reports).has(7), DEADLINE);
      executor.flushReports();
      const failed = reports.find((r) => r.taskId === 7 && r.state === 'FAILED');
      assert.deepEqual(failed?.error, {
        name: 'OutOfMemoryError',
        message:
          'Task 7 (partition 3 of stage 2) ran out of memory: executor heap 64m; set wick.executor.memory higher',
      });
      // A new thread takes the lost one's place.
      executor.launchTask({ ...(after as TaskDescription), taskId: 8 });
      await waitFor('the next task to end', () => ends(reports).has(8), DEADLINE);
      executor.flushReports();
      assert.deepEqual(ends(reports).get(8), ['FINISHED ["after"]']);
    },
    { memoryMB: 64 },
  );
});
