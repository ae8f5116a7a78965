/**
 * A task thread's batch protocol (backend/app/task/taskWorker.ts), run in this thread: the test
 * plays the executor, with an adds channel (a port here), the reports it receives, and the batch's
 * control array, so that each step of the hand-over happens when the test says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import {
  AVAILABLE,
  BATCH_CLOSED,
  BATCH_STOPPED,
  type BatchAdd,
  type BatchReport,
  CLAIMED,
  CONTROL_LENGTH,
  ENDED,
  RECEIVED,
  runBatch,
} from '../../../backend/app/task/taskWorker.js';
import type { TaskDescription } from '../../../backend/protocol/task.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-task-worker-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function task(id: number): TaskDescription {
  return {
    taskId: id,
    jobId: 0,
    stageId: 0,
    partition: id,
    attempt: 0,
    source: { kind: 'array', data: [id] },
    transformations: [{ kind: 'map', fn: { source: '(x) => x * 10' } }],
    action: { kind: 'collect' },
  };
}

/** What the executor does to add tasks to running batch `batch` (Executor's add). */
function add(
  port: MessageChannel['port1'],
  batch: number,
  control: Int32Array,
  tasks: TaskDescription[],
): boolean {
  const n = Atomics.load(control, AVAILABLE) & ~BATCH_CLOSED;
  port.postMessage({ batch, tasks });
  return Atomics.compareExchange(control, AVAILABLE, n, n + tasks.length) === n;
}

/** A thread's channels over `port2`, and the reports it posts. */
function channels(port2: MessageChannel['port2']) {
  const reports: BatchReport[] = [];
  const io = {
    nextAdd: () => receiveMessageOnPort(port2)?.message as BatchAdd | undefined,
    post: (r: BatchReport) => reports.push(r),
  };
  return { io, reports };
}

test('a batch runs the tasks added while it runs; once it has closed, tasks added are refused', async () => {
  const { port1, port2 } = new MessageChannel();
  const { io, reports } = channels(port2);
  const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_LENGTH));
  control[AVAILABLE] = 1;
  // The thread starts task 0 and awaits its end: the executor adds two more meanwhile, after
  // tasks for another batch (another thread's) that this one leaves.
  const ran = runBatch({ place: { appDir: dir }, batch: 7, tasks: [task(0)], control }, io);
  assert.equal(Atomics.load(control, RECEIVED), 1, 'the thread did not say it has the batch');
  port1.postMessage({ batch: 8, tasks: [task(9)] });
  assert.equal(add(port1, 7, control, [task(1), task(2)]), true);
  assert.equal(await ran, 3);
  assert.ok(
    reports.every((r) => r.wickBatch === 7),
    `a report not of batch 7: ${JSON.stringify(reports)}`,
  );
  assert.deepEqual(
    reports.map((r) => r.ran),
    [...reports.slice(1).map(() => undefined), 3],
    'the batch did not end with one last report of how many tasks it ran',
  );
  assert.deepEqual(
    reports.flatMap((r) => r.outcomes).map((o) => [o.index, o.outcome]),
    [
      [0, { ok: true, result: [0] }],
      [1, { ok: true, result: [10] }],
      [2, { ok: true, result: [20] }],
    ],
  );
  assert.equal(Atomics.load(control, CLAIMED), 3);
  assert.equal(Atomics.load(control, ENDED), 3);
  // Closed with all three read: a task added now is not the batch's, and the executor keeps it.
  assert.equal(Atomics.load(control, AVAILABLE), 3 | BATCH_CLOSED);
  assert.equal(add(port1, 7, control, [task(3)]), false);
  port1.close();
});

test('a batch stopped by the executor runs none of the tasks it has not claimed', async () => {
  const { port1, port2 } = new MessageChannel();
  const { io, reports } = channels(port2);
  const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_LENGTH));
  control[AVAILABLE] = 2;
  const ran = runBatch(
    { place: { appDir: dir }, batch: 1, tasks: [task(0), task(1)], control },
    io,
  );
  // Task 0 is claimed; the executor takes task 1 back.
  Atomics.or(control, CLAIMED, BATCH_STOPPED);
  assert.equal(await ran, 1);
  assert.deepEqual(
    reports.flatMap((r) => r.outcomes).map((o) => o.index),
    [0],
  );
  assert.equal(reports.at(-1)?.ran, 1);
  port1.close();
});
