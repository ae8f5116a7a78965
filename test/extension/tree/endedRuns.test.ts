import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PastRun } from '../../../backend/agent/protocol.js';
import { endedRunsMessage, endedUntold } from '../../../extension/tree/endedRuns.js';

const run = (appId: string, state: PastRun['state'], message?: string): PastRun => ({
  appId,
  name: `job ${appId}`,
  state,
  startTime: 0,
  ...(message ? { message } : {}),
  logs: { dir: '/x', removed: true, files: [] },
});

test('only runs a cluster end killed (with a message), not a user kill, and each once', () => {
  const runs = [
    run('app-1', 'KILLED', 'the window reloaded'),
    run('app-2', 'KILLED'),
    run('app-3', 'FINISHED'),
  ];
  assert.deepEqual(
    endedUntold(runs, []).map((r) => r.appId),
    ['app-1'],
  );
  assert.deepEqual(endedUntold(runs, ['app-1']), []);
});

test('the notice names the runs, says why and where they are', () => {
  assert.equal(
    endedRunsMessage([run('app-1', 'KILLED', 'the window reloaded')]),
    "Wick: 1 run was ended by its local cluster's end — the window reloaded: job app-1 (app-1). It is under Completed, with its output and logs.",
  );
  assert.match(
    endedRunsMessage([run('app-1', 'KILLED', 'w'), run('app-2', 'KILLED', 'w')]),
    /^Wick: 2 runs were ended .*: job app-1 \(app-1\), job app-2 \(app-2\)\. They are under Completed/,
  );
});
