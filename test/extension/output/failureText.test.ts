import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failureText } from '../../../extension/output/failureText.js';

test("a task's failure: the task, the stack once, and the user's line as a link with line and column", () => {
  const text = failureText('Word Count', 'app-1', {
    message: 'Error: bad word',
    stack: 'Error: bad word\n    at /home/u/wc.ts:12:5\n    at map',
    location: { file: '/home/u/wc.ts', line: 12, column: 5 },
    task: { stageId: 3, partitionId: 1 },
  });
  assert.equal(
    text,
    [
      'Word Count (app-1) FAILED',
      'The task of stage 3, partition 1, kept failing (Debug Failed Task reruns it under the debugger)',
      '',
      'Error: bad word',
      '    at /home/u/wc.ts:12:5',
      '    at map',
      '',
      'Your line: /home/u/wc.ts:12:5',
      'Open it: file:///home/u/wc.ts#L12,5',
      '',
    ].join('\n'),
  );
});

test('a failure without stack or location: the message alone; a stack that does not repeat it follows it', () => {
  assert.equal(failureText('A', 'app-2', { message: 'boom' }), 'A (app-2) FAILED\n\nboom\n');
  assert.equal(
    failureText('A', 'app-2', { message: 'boom', stack: 'at x' }),
    'A (app-2) FAILED\n\nboom\nat x\n',
  );
});
