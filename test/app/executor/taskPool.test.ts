/**
 * The task threads' heaps (dist/task-worker.cjs: run `npm run build` first): a task reads its own
 * thread's young generation, which keeps V8's default size (see taskThreadFlags.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  newTaskPool,
  prestartTaskPool,
  takeTaskPool,
} from '../../../backend/app/executor/taskPool.js';
import type { TaskOutcome } from '../../../backend/app/task/taskWorker.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-task-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a task thread’s new space is not enlarged ahead of need: a fresh thread would fault in every page', async () => {
  const pool = newTaskPool(1);
  try {
    const outcome = (await pool.run({
      place: { appDir: dir },
      task: {
        taskId: 0,
        jobId: 0,
        stageId: 0,
        partition: 0,
        attempt: 0,
        source: { kind: 'array', data: [0] },
        transformations: [
          {
            kind: 'map',
            fn: {
              source: `() => require('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')`,
            },
          },
        ],
        action: { kind: 'collect' },
      },
    })) as TaskOutcome;
    assert.ok(outcome.ok, `the task failed: ${JSON.stringify(outcome)}`);
    const [space] = outcome.result as { space_size: number; physical_space_size: number }[];
    assert.ok(space, 'the task returned the new space');
    // 4 MiB here when the thread starts, 8 once its start-up has grown it; 16 with the
    // --min-semi-space-size=16 that taskThreadFlags.ts once set.
    assert.ok(
      space.space_size < 16 * 2 ** 20,
      `new space is ${space.space_size} bytes, expected V8's default (under 16 MiB)`,
    );
  } finally {
    await pool.destroy();
  }
});

/** A task of one element that returns what `source` (a function of no argument) gives. */
function evalTask(source: string) {
  return {
    place: { appDir: dir },
    task: {
      taskId: 0,
      jobId: 0,
      stageId: 0,
      partition: 0,
      attempt: 0,
      source: { kind: 'array' as const, data: [0] },
      transformations: [{ kind: 'map' as const, fn: { source } }],
      action: { kind: 'collect' as const },
    },
  };
}

const HEAP_LIMIT_MB = `() => Math.round(require('node:v8').getHeapStatistics().heap_size_limit / 2 ** 20)`;

test('each thread’s heap is its share of the executor’s memory; a pool started ahead serves only the same cores and memory', async () => {
  const pool = newTaskPool(2, 512);
  try {
    const outcome = (await pool.run(evalTask(HEAP_LIMIT_MB))) as TaskOutcome;
    assert.ok(outcome.ok, JSON.stringify(outcome));
    const [limit] = outcome.result as number[];
    // The old generation's 256 MiB, plus the young generation V8 adds to the limit.
    assert.ok(limit !== undefined && limit >= 256 && limit < 340, `heap limit ${limit} MiB`);
  } finally {
    await pool.destroy();
  }
  prestartTaskPool(1, 1024);
  const same = takeTaskPool(1, 1024);
  prestartTaskPool(1, 1024);
  const other = takeTaskPool(1, 512);
  try {
    assert.notEqual(same, other);
    const [a, b] = (await Promise.all([
      same.run(evalTask(HEAP_LIMIT_MB)),
      other.run(evalTask(HEAP_LIMIT_MB)),
    ])) as TaskOutcome[];
    assert.ok(a?.ok && b?.ok);
    assert.ok(((a.result as number[])[0] as number) >= 1024, 'the standby’s pool, 1g');
    assert.ok(((b.result as number[])[0] as number) < 600, 'a new pool for 512m');
  } finally {
    await Promise.all([same.destroy(), other.destroy()]);
  }
});
