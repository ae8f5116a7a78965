import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MasterState } from '../../../backend/agent/protocol.js';
import {
  appWaitingReason,
  driverWaitingReason,
  waitingNews,
  waitsForGood,
} from '../../../extension/submit/waitingReasons.js';

type App = MasterState['activeApps'][number];
type Driver = MasterState['activeDrivers'][number];

const tooBig =
  'each executor asks for 512000 MiB but the largest worker has 2048 MiB (lower wick.executor.memory or add a bigger worker)';
const app = (state: string, waitingReason?: string) =>
  ({
    id: 'app-1',
    name: 'Pi',
    state,
    ...(waitingReason ? { waitingReason } : {}),
  }) as unknown as App;
const driver = (state: string, cores = 1, mem = 1024) =>
  ({ id: 'driver-1', state, cores, mem }) as unknown as Driver;
const worker = (memory: number, cores: number, memoryUsed = 0, coresUsed = 0) => ({
  state: 'ALIVE',
  memory,
  cores,
  memoryUsed,
  coresUsed,
});
const state = (over: Partial<Record<keyof MasterState, unknown>>) =>
  ({
    workers: [],
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
    ...over,
  }) as unknown as MasterState;

test("a master's reason names the VS Code setting, not the --conf key", () => {
  const why = appWaitingReason(app('WAITING', tooBig)) as string;
  assert.match(why, /largest worker has 2048 MiB/);
  assert.match(why, /setting wick\.submit\.executorMemory/);
  assert.doesNotMatch(why, /wick\.executor\.memory/);
  assert.match(
    appWaitingReason(app('WAITING', 'it has all the cores it may have (wick.cores.max)')) as string,
    /setting wick\.submit\.maxCores/,
  );
});

test('only a waiting app has a reason; one without a reason from its master still waits', () => {
  assert.equal(appWaitingReason(app('RUNNING', tooBig)), undefined);
  assert.equal(appWaitingReason(app('WAITING')), 'waiting for resources');
});

test("a SUBMITTED driver's reason: no worker alive, none that big, none free now", () => {
  assert.equal(driverWaitingReason(driver('SUBMITTED'), state({})), 'no worker is alive');
  assert.match(
    driverWaitingReason(
      driver('SUBMITTED', 1, 4096),
      state({ workers: [worker(2048, 2)] }),
    ) as string,
    /asks for 1 core and 4 GiB; no worker is that big/,
  );
  assert.match(
    driverWaitingReason(
      driver('SUBMITTED', 2),
      state({ workers: [worker(2048, 2, 0, 1)] }),
    ) as string,
    /no worker has that free now/,
  );
  assert.equal(
    driverWaitingReason(driver('SUBMITTED'), state({ workers: [worker(2048, 2)] })),
    undefined,
  );
  assert.equal(driverWaitingReason(driver('RUNNING'), state({})), undefined);
});

test('waiting for good is what no alive worker could end; a busy cluster is not', () => {
  assert.equal(waitsForGood(tooBig), true);
  assert.equal(waitsForGood('no worker is alive'), true);
  assert.equal(waitsForGood('no worker has 512 MiB of memory free now'), false);
  assert.equal(waitsForGood('it has all the cores it may have (wick.cores.max)'), false);
});

test('news after a submit: tell of a wait for good once, stop when the app runs or ends', () => {
  const watched = { appId: 'app-1' };
  assert.equal(waitingNews(watched, undefined), undefined);
  assert.equal(waitingNews(watched, state({})), undefined, 'not registered yet: keep watching');
  assert.match(
    waitingNews(watched, state({ activeApps: [app('WAITING', tooBig)] })) as string,
    /^Pi \(app-1\) is WAITING: each executor asks for 512000 MiB/,
  );
  assert.equal(
    waitingNews(
      watched,
      state({ activeApps: [app('WAITING', 'no worker has 512 MiB of memory free now')] }),
    ),
    undefined,
  );
  assert.equal(waitingNews(watched, state({ activeApps: [app('RUNNING')] })), 'done');
  assert.equal(waitingNews(watched, state({ completedApps: [app('FINISHED')] })), 'done');
});

test('news for a cluster-mode driver that no worker can start', () => {
  const watched = { driverId: 'driver-1' };
  assert.match(
    waitingNews(
      watched,
      state({ activeDrivers: [driver('SUBMITTED', 1, 8192)], workers: [worker(2048, 2)] }),
    ) as string,
    /^Driver driver-1 is SUBMITTED, not started: the driver asks for 1 core and 8 GiB/,
  );
  assert.equal(waitingNews(watched, state({ activeDrivers: [driver('RUNNING')] })), 'done');
});
