import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LoggedFailedTask } from '../../../backend/agent/protocol.js';
import { pastFailedTaskRun } from '../../../extension/debug/pastFailedTask.js';

const logged: LoggedFailedTask = {
  jobId: 0,
  stageId: 1,
  stageAttemptId: 0,
  partitionId: 2,
  taskId: 7,
  executorId: '0',
  failures: 4,
  error: [
    'Error: bad record 50',
    '    at /opt/wick/dist/wick.cjs:1:2000',
    '    at /w/node_modules/lib/index.js:3:4',
    '    at Array.map (<anonymous>)',
    '    at /w/jobs/failTask.ts:12:30',
  ].join('\n'),
};
const users = (f: string) => f.startsWith('/w/') && !f.includes('node_modules');

test("a past run's failed task from its log: the user's throwing line, its stage and partition", () => {
  assert.deepEqual(pastFailedTaskRun({ appId: 'app-1', file: '/w/jobs/main.ts' }, logged, users), {
    program: '/w/jobs/main.ts',
    location: { file: '/w/jobs/failTask.ts', line: 12, column: 30 },
    task: { stageId: 1, partitionId: 2 },
  });
  // Not submitted from the editor: the file it threw in is run again.
  const run = pastFailedTaskRun({ appId: 'app-1' }, logged, users);
  assert.equal('program' in run && run.program, '/w/jobs/failTask.ts');
});

test("a task that threw outside the user's code has nothing to stop at: said, with the error", () => {
  const r = pastFailedTaskRun({ appId: 'app-1' }, logged, () => false);
  assert.ok('reason' in r);
  assert.match(r.reason, /app-1 \(stage 1, partition 2\) threw outside your code.*bad record 50/);
});
