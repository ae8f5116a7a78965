/**
 * A task thread's batch protocol (backend/app/task/taskWorker.ts), run in this thread: the test
 * plays the executor, with the batch's port and control array, so that each step of the hand-over
 * happens when the test says.
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
  type BatchOutcome,
  CLAIMED,
  CONTROL_LENGTH,
  ENDED,
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

/** What the executor does to add tasks to a running batch (Executor's add). */
function add(
  port: MessageChannel['port1'],
  control: Int32Array,
  tasks: TaskDescription[],
): boolean {
  const n = Atomics.load(control, AVAILABLE) & ~BATCH_CLOSED;
  port.postMessage(tasks);
  return Atomics.compareExchange(control, AVAILABLE, n, n + tasks.length) === n;
}

function outcomes(port: MessageChannel['port1']): BatchOutcome[] {
  const all: BatchOutcome[] = [];
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
    all.push(...(m.message as BatchOutcome[]));
  return all;
}

test('a batch runs the tasks added while it runs; once it has closed, tasks added are refused', async () => {
  const { port1, port2 } = new MessageChannel();
  const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_LENGTH));
  control[AVAILABLE] = 1;
  // The thread starts task 0 and awaits its end: the executor adds two more meanwhile.
  const ran = runBatch({ place: { appDir: dir }, tasks: [task(0)], control, port: port2 });
  assert.equal(add(port1, control, [task(1), task(2)]), true);
  assert.equal(await ran, 3);
  assert.deepEqual(
    outcomes(port1).map((o) => [o.index, o.outcome]),
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
  assert.equal(add(port1, control, [task(3)]), false);
  port1.close();
});

test('a batch stopped by the executor runs none of the tasks it has not claimed', async () => {
  const { port1, port2 } = new MessageChannel();
  const control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_LENGTH));
  control[AVAILABLE] = 2;
  const ran = runBatch({ place: { appDir: dir }, tasks: [task(0), task(1)], control, port: port2 });
  // Task 0 is claimed; the executor takes task 1 back.
  Atomics.or(control, CLAIMED, BATCH_STOPPED);
  assert.equal(await ran, 1);
  assert.deepEqual(
    outcomes(port1).map((o) => o.index),
    [0],
  );
  port1.close();
});
