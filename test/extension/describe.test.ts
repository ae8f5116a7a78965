/** Describe: an item's whole state as kubectl describe prints it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../backend/agent/protocol.js';
import { describe } from '../../extension/tree/describe.js';

const exec = (id: number, state: string, extra = {}) => ({
  appId: 'app-1',
  id,
  workerId: 'worker-a',
  workerHostPort: '127.0.0.1:4000',
  cores: 2,
  memory: 1024,
  state,
  history: [
    { state: 'LAUNCHING', time: Date.UTC(2026, 11, 3, 9, 0, id) },
    { state: 'RUNNING', time: Date.UTC(2026, 11, 3, 9, 0, id + 1) },
  ],
  ...extra,
});

const state = {
  url: 'wick://127.0.0.1:7077',
  webUiUrl: 'http://127.0.0.1:8080',
  status: 'ALIVE',
  workers: [
    {
      id: 'worker-a',
      host: '127.0.0.1',
      port: 4000,
      webUiAddress: 'http://127.0.0.1:8081',
      cores: 4,
      coresUsed: 2,
      memory: 2048,
      memoryUsed: 1024,
      state: 'ALIVE',
      lastHeartbeat: 10_000,
      executors: [{ appId: 'app-1', execId: 0 }],
      driverIds: [],
    },
  ],
  activeApps: [
    {
      id: 'app-1',
      name: 'Wick Pi',
      user: 'me',
      coresGranted: 2,
      memoryPerExecutorMB: 1024,
      state: 'RUNNING',
      startTime: 1_000,
      driver: { address: '127.0.0.1:5000', name: 'AppClient' },
      executors: [exec(0, 'RUNNING')],
      removedExecutors: [
        exec(1, 'FAILED', { exitStatus: 1, message: 'Command exited with code 1' }),
      ],
    },
  ],
  completedApps: [],
  activeDrivers: [],
  completedDrivers: [],
  seq: 3,
} as unknown as MasterState;

test('an application: its fields aligned, its executors as tables, their history as Events', () => {
  const text = describe({ kind: 'app', id: 'app-1' }, state, 61_000);
  assert.match(text, /^Name:\s+Wick Pi\nID:\s+app-1\nState:\s+RUNNING\n/);
  assert.match(text, /Cores:\s+2 granted, no maximum/);
  // Values start in one column, as kubectl aligns them.
  const head = text.split('\n\n')[0]?.split('\n') ?? [];
  assert.equal(
    new Set(head.map((l) => /^\S[^:]*:\s+/.exec(l)?.[0].length)).size,
    1,
    head.join('\n'),
  );
  assert.match(text, /Duration:\s+1m 0s/);
  assert.match(text, /\nExecutors:\n\s+ID\s+State\s+Exit.*\n\s+-+.*\n\s+0\s+RUNNING/);
  assert.match(text, /Removed Executors:\n.*\n.*\n\s+1\s+FAILED\s+1 .*Command exited with code 1/);
  const events = text.slice(text.indexOf('Events:'));
  assert.deepEqual(
    events
      .split('\n')
      .slice(3)
      .filter(Boolean)
      .map((l) =>
        l
          .trim()
          .split(/\s{3,}/)
          .slice(1)
          .join(' '),
      ),
    ['executor 0 LAUNCHING', 'executor 0 RUNNING', 'executor 1 LAUNCHING', 'executor 1 RUNNING'],
  );
});

test('a worker, the master, an executor; something gone says so', () => {
  const w = describe({ kind: 'worker', id: 'worker-a' }, state, 25_000);
  assert.match(w, /Last Heartbeat:\s+1970-01-01T00:00:10\.000Z \(15s ago\)/);
  assert.match(w, /Executors:\n.*\n.*\n\s+app-1\s+Wick Pi\s+0/);
  assert.match(describe({ kind: 'master' }, state, 0), /Workers:\s+1 alive of 1/);
  assert.match(
    describe({ kind: 'executor', appId: 'app-1', execId: 1 }, state, 0),
    /Exit Status:\s+1\nReason:\s+Command exited with code 1/,
  );
  assert.equal(
    describe({ kind: 'driver', id: 'driver-9' }, state, 0),
    'Driver driver-9 is not known to the master wick://127.0.0.1:7077 (any more).\n',
  );
  assert.equal(describe({ kind: 'master' }, undefined, 0), 'Not connected to a master.\n');
});
