/**
 * The task threads' heaps (dist/task-worker.cjs: run `npm run build` first): a task reads its own
 * thread's young generation, which taskPool's V8 flags size before the thread starts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { newTaskPool } from '../../../backend/app/executor/taskPool.js';
import type { TaskOutcome } from '../../../backend/app/task/taskWorker.js';

const dir = mkdtempSync(join(tmpdir(), 'wick-test-task-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a task thread starts with a 4 MiB semispace, and touches only what it allocates', async () => {
  const pool = newTaskPool(1);
  try {
    const outcome = (await pool.run({
      appDir: dir,
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
    // Without taskPool's flags a worker thread's new space starts at 2 MiB here.
    assert.ok(
      space.space_size >= 4 * 2 ** 20,
      `new space is ${space.space_size} bytes, expected at least 4 MiB`,
    );
    assert.ok(
      space.physical_space_size < space.space_size,
      `all ${space.physical_space_size} bytes of the new space are resident before any allocation`,
    );
  } finally {
    await pool.destroy();
  }
});
