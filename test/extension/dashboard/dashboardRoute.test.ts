import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PastRun } from '../../../backend/agent/protocol.js';
import { dashboardRoute, pastRunOfRoute } from '../../../extension/dashboard/dashboardRoute.js';

const run: PastRun = {
  appId: 'app-20261207100000-0001',
  name: 'Fail Task',
  state: 'FAILED',
  startTime: 1,
  logs: { dir: '/x', removed: true, files: [] },
};

test("a past run's row opens its application page; routes of it are known as a past run's", () => {
  const hash = dashboardRoute({ kind: 'run', run });
  assert.equal(hash, '#/app/app-20261207100000-0001');
  const runs = [run];
  assert.equal(pastRunOfRoute(hash, runs), run.appId);
  assert.equal(pastRunOfRoute(`${hash}/job/0`, runs), run.appId);
  assert.equal(pastRunOfRoute(`${hash}/stage/0/0`, runs), run.appId);
  // Another application, no route, a bad escape, another page: not a past run's.
  assert.equal(pastRunOfRoute('#/app/app-20261207100000-0002', runs), undefined);
  assert.equal(pastRunOfRoute(undefined, runs), undefined);
  assert.equal(pastRunOfRoute('#/app/%E0%A4%A', runs), undefined);
  assert.equal(pastRunOfRoute('#/workers', runs), undefined);
});
