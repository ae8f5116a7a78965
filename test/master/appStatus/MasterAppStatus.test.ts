/**
 * The master's stores of its applications (pure logic, real files for the event log): the bound
 * of events a second over an injected time, a report refused whole, ended applications' stores
 * kept up to wick.deploy.retainedApplications, and an application no longer kept read back from
 * its event log in the master's wick.eventLog.dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_RETENTION } from '../../../backend/appstatus/AppStatusStore.js';
import { EventLogWriter } from '../../../backend/eventlog/EventLogWriter.js';
import type { ApplicationInfo } from '../../../backend/master/ApplicationInfo.js';
import { MasterAppStatus } from '../../../backend/master/appStatus/MasterAppStatus.js';
import { type RpcError, RpcErrorCode } from '../../../backend/protocol/errors.js';
import type { WickListenerEvent } from '../../../backend/protocol/listener.js';
import { MAX_REPORTED_EVENTS_PER_SECOND } from '../../../backend/protocol/statusReport.js';

/** What MasterAppStatus reads of an application at the master. */
function app(id: string, finished = false): ApplicationInfo {
  return {
    id,
    desc: { name: `name of ${id}`, user: 'u' },
    startTime: 5,
    isFinished: finished,
    endTime: finished ? 9 : undefined,
  } as unknown as ApplicationInfo;
}

const ends = (n: number): WickListenerEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    event: 'WickListenerJobEnd',
    jobId: 100 + i,
    result: 'JobFailed',
    time: 1,
  }));

test('events a second are bounded per application, and a refused report changes nothing', () => {
  const s = new MasterAppStatus({
    retention: DEFAULT_RETENTION,
    retainedApplications: 10,
    eventLogDir: undefined,
  });
  const a = app('app-a');
  s.apply(a, [{ event: 'WickListenerJobStart', jobId: 1, stageIds: [], time: 1 }], [], 1000);
  s.apply(a, ends(MAX_REPORTED_EVENTS_PER_SECOND - 1), [], 1500);
  assert.throws(
    () =>
      s.apply(
        a,
        [{ event: 'WickListenerJobEnd', jobId: 1, result: 'JobSucceeded', time: 2 }],
        [],
        1999,
      ),
    (err: RpcError) => {
      assert.match(
        String(err),
        /^RpcError: ReportListenerEvents of app-a refused: more than 20000 events in a second \(MAX_REPORTED_EVENTS_PER_SECOND\): 20000 taken, 1 more sent; nothing of it was applied$/,
      );
      // A bound that passes: the driver may send the same report again once the second is over.
      assert.equal(err.code, RpcErrorCode.RateLimited);
      assert.deepEqual(err.data, { retryAfterMs: 1 });
      return true;
    },
  );
  assert.equal(s.applications()[0]?.name, 'name of app-a');
  // The next second: taken.
  const p = s.apply(
    a,
    [{ event: 'WickListenerJobEnd', jobId: 1, result: 'JobSucceeded', time: 2 }],
    [],
    2000,
  );
  assert.equal(p.jobs.succeeded, 1);
});

test('ended applications are kept up to the bound; one no longer kept is read from its event log', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wick-test-masterappstatus-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const writer = await EventLogWriter.start({ dir, appId: 'app-old', compress: false });
  for (const e of [
    { event: 'WickListenerApplicationStart', appName: 'old', appId: 'app-old', time: 3, user: 'u' },
    { event: 'WickListenerJobStart', jobId: 0, stageIds: [0], time: 4 },
    { event: 'WickListenerJobEnd', jobId: 0, result: 'JobSucceeded', time: 6 },
    { event: 'WickListenerApplicationEnd', time: 7 },
  ] satisfies WickListenerEvent[])
    writer.write(e);
  await writer.close();

  const s = new MasterAppStatus({
    retention: DEFAULT_RETENTION,
    retainedApplications: 1,
    eventLogDir: dir,
  });
  s.apply(app('app-old', true), [], [], 0);
  s.apply(app('app-x', true), [], [], 0);
  s.apply(app('app-y'), [], [], 0);
  assert.deepEqual(
    s
      .applications()
      .map((a) => [a.id, a.completed])
      .sort(),
    [
      ['app-x', true],
      ['app-y', false],
    ],
    'the oldest ended one is forgotten',
  );
  const old = await s.store('app-old');
  assert.equal(old?.app.appName, 'old');
  assert.equal(old?.app.endTime, 7);
  assert.equal(old?.job(0)?.status, 'SUCCEEDED');
  assert.equal(await s.store('app-none'), undefined);
});

test('a registered application is listed, with no jobs, before its first report; the report then fills the same store', async () => {
  const s = new MasterAppStatus({
    retention: DEFAULT_RETENTION,
    retainedApplications: 10,
    eventLogDir: undefined,
  });
  assert.equal(await s.store('app-new'), undefined, 'an application never registered is unknown');
  const a = app('app-new');
  s.registered(a, 1000);
  assert.deepEqual(
    s.applications().map((x) => [x.id, x.name]),
    [['app-new', 'name of app-new']],
  );
  const store = await s.store('app-new');
  assert.ok(store, 'known before any report');
  const job: WickListenerEvent[] = [
    { event: 'WickListenerJobStart', jobId: 1, stageIds: [], time: 1 },
    { event: 'WickListenerJobEnd', jobId: 1, result: 'JobSucceeded', time: 2 },
  ];
  assert.equal(s.apply(a, job, [], 1100).jobs.succeeded, 1);
  assert.equal(await s.store('app-new'), store, 'the report went to the store already listed');
  s.registered(a, 1200);
  assert.equal(await s.store('app-new'), store, 'registering again keeps what was reported');
});
