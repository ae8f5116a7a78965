/**
 * A driver's report of its listener events (backend/master/operations/appStatus.ts) through the
 * operation, with a real subscriber (harness.ts): the application's progress in brief is pushed,
 * once per report, and a report past a bound is refused whole, naming the bound, the store and
 * what the subscriber saw left as they were.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportListenerEvents } from '../../../backend/master/operations/appStatus.js';
import { addApplication } from '../../../backend/master/operations/apps.js';
import { ReportListenerEvents } from '../../../backend/protocol/app.js';
import { type RpcError, RpcErrorCode } from '../../../backend/protocol/errors.js';
import type { WickListenerEvent } from '../../../backend/protocol/listener.js';
import { MAX_REPORTED_EVENTS_PER_SECOND } from '../../../backend/protocol/statusReport.js';
import { appIn } from '../../helpers/masterMocks.js';
import { operations } from './harness.js';

const job = (jobId: number): WickListenerEvent[] => [
  { event: 'WickListenerJobStart', jobId, stageIds: [jobId], time: 1000 + jobId },
  {
    event: 'WickListenerStageSubmitted',
    stageId: jobId,
    stageAttemptId: 0,
    jobId,
    name: `stage ${jobId}`,
    numTasks: 4,
    time: 1000 + jobId,
  },
];

test('a report is applied and its progress pushed; one past a bound is refused whole', {
  timeout: 30_000,
}, async (t) => {
  const { ops, told, app } = await operations(t);
  const a = await app(2);
  assert.ok(addApplication(ops, a.info));
  reportListenerEvents(ops, a.info, ReportListenerEvents({ appId: a.info.id, events: job(0) }));
  const s = await told((s) => appIn(s, a.info.id)?.progress?.jobs.active === 1);
  assert.deepEqual(appIn(s, a.info.id)?.progress?.activeStages[0], {
    stageId: 0,
    attemptId: 0,
    name: 'stage 0',
    submissionTime: 1000,
    counts: {
      numTasks: 4,
      numActiveTasks: 0,
      numCompletedTasks: 0,
      numFailedTasks: 0,
      numKilledTasks: 0,
    },
  });

  // More than the master takes in a second: refused, naming the bound, nothing of it applied.
  // (Ends of jobs it does not know: no other bound is in play.)
  const flood: WickListenerEvent[] = Array.from(
    { length: MAX_REPORTED_EVENTS_PER_SECOND },
    (_, i) => ({
      event: 'WickListenerJobEnd',
      jobId: 100 + i,
      result: 'JobFailed',
      time: 3000,
    }),
  );
  // Right after another report: both in the same second, whatever the machine's speed.
  reportListenerEvents(
    ops,
    a.info,
    ReportListenerEvents({ appId: a.info.id, events: job(1).slice(0, 1) }),
  );
  assert.throws(
    () =>
      reportListenerEvents(ops, a.info, {
        ...ReportListenerEvents({ appId: a.info.id, events: [] }),
        events: flood,
      }),
    (err: RpcError) => {
      assert.match(
        String(err),
        new RegExp(
          `^RpcError: ReportListenerEvents of ${a.info.id} refused: more than ${MAX_REPORTED_EVENTS_PER_SECOND} events in a second`,
        ),
      );
      // The one bound that passes: the driver sends the same report again (RateLimited).
      assert.equal(err.code, RpcErrorCode.RateLimited);
      return true;
    },
  );
  const store = await ops.appStatus.store(a.info.id);
  assert.equal(store?.jobList().length, 2, 'the refused report changed nothing');
  await told((s) => appIn(s, a.info.id)?.progress?.jobs.active === 2);
  assert.equal(appIn(await told(() => true), a.info.id)?.state, 'WAITING', 'the app is as it was');

  // A later, small report is taken again.
  reportListenerEvents(
    ops,
    a.info,
    ReportListenerEvents({
      appId: a.info.id,
      events: [{ event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: 2000 }],
    }),
  );
  await told((s) => appIn(s, a.info.id)?.progress?.jobs.succeeded === 1);
});
