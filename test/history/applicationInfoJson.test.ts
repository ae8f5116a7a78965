import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applicationInfoJson,
  parseApplicationQuery,
  selectApplications,
  sparkDate,
} from '../../backend/history/applicationInfoJson.js';
import type { ApplicationListing } from '../../backend/history/readListing.js';

function listing(appId: string, startTime: number, endTime?: number): ApplicationListing {
  return {
    appId,
    name: appId.toUpperCase(),
    user: 'ann',
    startTime,
    endTime,
    failure: undefined,
    completed: endTime !== undefined,
    lastUpdated: (endTime ?? startTime) + 5,
    truncated: false,
    logPath: `/logs/${appId}`,
    logName: appId,
    fileSize: 10,
    inProgressName: endTime === undefined,
    rolled: false,
    compressed: false,
  };
}

const T = Date.UTC(2026, 11, 7, 10, 0, 0, 123);

test("Spark's ApplicationInfo: one attempt, Spark's dates, a running one's end at -1", () => {
  assert.equal(sparkDate(T), '2026-12-07T10:00:00.123GMT');
  assert.deepEqual(applicationInfoJson(listing('app-1', T, T + 1500), '1.2.3'), {
    id: 'app-1',
    name: 'APP-1',
    attempts: [
      {
        startTime: '2026-12-07T10:00:00.123GMT',
        endTime: '2026-12-07T10:00:01.623GMT',
        lastUpdated: '2026-12-07T10:00:01.628GMT',
        duration: 1500,
        sparkUser: 'ann',
        completed: true,
        appSparkVersion: '1.2.3',
        startTimeEpoch: T,
        endTimeEpoch: T + 1500,
        lastUpdatedEpoch: T + 1505,
      },
    ],
  });
  const running = applicationInfoJson(listing('app-2', T), 'v').attempts[0];
  assert.equal(running?.endTime, '1969-12-31T23:59:59.999GMT');
  assert.equal(running?.endTimeEpoch, -1);
  assert.equal(running?.duration, 0);
  assert.equal(running?.completed, false);
});

test("the query selects as Spark's ApplicationListResource, and a bad value is named", () => {
  const apps = [
    listing('app-3', T + 3000),
    listing('app-2', T + 2000, T + 2500),
    listing('app-1', T, T + 100),
  ];
  const ids = (q: Record<string, string>) =>
    selectApplications(apps, parseApplicationQuery(q), T + 10_000).map((a) => a.appId);
  assert.deepEqual(ids({}), ['app-3', 'app-2', 'app-1']);
  assert.deepEqual(ids({ status: 'completed' }), ['app-2', 'app-1']);
  assert.deepEqual(ids({ status: 'RUNNING' }), ['app-3']);
  assert.deepEqual(ids({ limit: '1' }), ['app-3']);
  assert.deepEqual(ids({ minDate: String(T + 1000) }), ['app-3', 'app-2']);
  assert.deepEqual(ids({ maxDate: '2026-12-07T10:00:01.000GMT' }), ['app-1']);
  assert.deepEqual(ids({ minEndDate: String(T + 200), status: 'completed' }), ['app-2']);
  assert.deepEqual(ids({ maxDate: '2026-12-06' }), []);
  assert.throws(
    () => parseApplicationQuery({ status: 'done' }),
    /status must be "completed" or "running", got "done"/,
  );
  assert.throws(
    () => parseApplicationQuery({ limit: '-1' }),
    /limit must be a whole number.*got "-1"/,
  );
  assert.throws(
    () => parseApplicationQuery({ minDate: 'yesterday' }),
    /minDate must be a date.*got "yesterday"/,
  );
});
