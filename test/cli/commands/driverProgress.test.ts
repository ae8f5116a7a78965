import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driverStages } from '../../../backend/cli/commands/driverProgress.js';
import type { MasterStateMirror } from '../../../backend/client/MasterStateMirror.js';
import type { AppSummary } from '../../../backend/protocol/state.js';

const counts = (done: number, active: number) => ({
  numTasks: 10,
  numActiveTasks: active,
  numCompletedTasks: done,
  numFailedTasks: 0,
  numKilledTasks: 0,
});

function app(id: string, driverId: string | undefined, stageIds: number[]): AppSummary {
  return {
    id,
    name: id,
    user: 'u',
    coresGranted: 1,
    memoryPerExecutorMB: 1024,
    state: 'RUNNING',
    startTime: 1,
    driver: { address: 'h:1', name: 'd' },
    executors: [],
    removedExecutors: [],
    ...(driverId ? { driverId } : {}),
    progress: {
      jobs: { active: 1, succeeded: 0, failed: 0 },
      stages: { active: stageIds.length, complete: 0, failed: 0 },
      activeJobs: [],
      activeStages: stageIds.map((stageId) => ({
        stageId,
        attemptId: 0,
        name: `s${stageId}`,
        submissionTime: 99_999_999,
        counts: counts(stageId, 2),
      })),
      lastUpdated: 1,
    },
  } as AppSummary;
}

const state = (apps: AppSummary[]) =>
  ({ activeApps: apps }) as unknown as NonNullable<MasterStateMirror['state']>;

test('the stages of the application its driver registered, aged from when they were first seen here', () => {
  const seen = new Map<string, number>();
  const s = state([app('app-a', 'driver-1', [7]), app('app-b', 'driver-2', [3, 4])]);
  const first = driverStages(s, 'driver-2', seen, 1_000);
  assert.deepEqual(
    first.map((x) => [x.stageId, x.numCompletedTasks, x.numActiveTasks, x.submittedAtMs]),
    [
      [3, 3, 2, 1_000],
      [4, 4, 2, 1_000],
    ],
    "driver-2's stages, not driver-1's; the driver's clock (submissionTime) is not used",
  );
  const later = driverStages(state([app('app-b', 'driver-2', [4, 5])]), 'driver-2', seen, 3_000);
  assert.deepEqual(
    later.map((x) => [x.stageId, x.submittedAtMs]),
    [
      [4, 1_000],
      [5, 3_000],
    ],
  );
  assert.equal(seen.has('app-b/3/0'), false, 'a stage that ended is forgotten');
});

test('nothing for a driver no application names, nor before the state or the run is known', () => {
  const seen = new Map<string, number>();
  const s = state([app('app-a', undefined, [1])]);
  assert.deepEqual(driverStages(s, 'driver-1', seen, 0), []);
  assert.deepEqual(driverStages(undefined, 'driver-1', seen, 0), []);
  assert.deepEqual(driverStages(s, undefined, seen, 0), []);
});
