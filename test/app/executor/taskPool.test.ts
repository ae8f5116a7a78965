/**
 * The task threads' heaps (dist/task-worker.cjs: run `npm run build` first): a task reads its own
 * thread's young generation, which keeps V8's default size (see taskThreadFlags.ts).
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
