import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../backend/agent/protocol.js';
import { submittedLogSource } from '../../extension/logs/submittedLog.js';

const exec = (id: number, state = 'RUNNING') => ({ appId: 'app-1', id, state });

function state(app?: { state: string; executors?: unknown[]; removed?: unknown[] }): MasterState {
  const a = app && {
    id: 'app-1',
    state: app.state,
    executors: app.executors ?? [],
    removedExecutors: app.removed ?? [],
  };
  const done = a && ['FINISHED', 'FAILED', 'KILLED'].includes(a.state);
  return {
    activeApps: a && !done ? [a] : [],
    completedApps: a && done ? [a] : [],
  } as unknown as MasterState;
}

test("a cluster-mode submit shows its driver's stdout, app or not", () => {
  assert.deepEqual(submittedLogSource({ driverId: 'driver-1', appId: 'app-1' }, undefined), {
    driverId: 'driver-1',
  });
});

test('a client-mode submit shows the first executor, running or already removed', () => {
  const s = state({
    state: 'RUNNING',
    executors: [exec(2), exec(1)],
    removed: [exec(0, 'EXITED')],
  });
  assert.deepEqual(submittedLogSource({ appId: 'app-1' }, s), { appId: 'app-1', execId: 0 });
  const later = state({ state: 'RUNNING', executors: [exec(3), exec(1)] });
  assert.deepEqual(submittedLogSource({ appId: 'app-1' }, later), { appId: 'app-1', execId: 1 });
});

test('no executor yet (or the app not yet in the state): wait for the next state', () => {
  assert.equal(submittedLogSource({ appId: 'app-1' }, state({ state: 'WAITING' })), undefined);
  assert.equal(submittedLogSource({ appId: 'app-1' }, state()), undefined);
  assert.equal(submittedLogSource({ appId: 'app-1' }, undefined), undefined);
});

test('an app that ended with no executor has no log: a clear error, not a wait forever', () => {
  assert.throws(
    () => submittedLogSource({ appId: 'app-1' }, state({ state: 'KILLED' })),
    /app-1 ended KILLED before any executor started/,
  );
  assert.throws(() => submittedLogSource({}, state()), /neither an application nor a driver/);
});
