/**
 * Hostile status reports against a real master (docs/protocol.md, ReportListenerEvents): two
 * applications' drivers (WickContexts in this process) on a real cluster that authenticates. B's
 * driver, over its own registered connection, reports a job for A: refused NotPermitted, and A's
 * /api/v1 and state stay as they were. B then reports more jobs running at once than the master
 * follows (MAX_ACTIVE_JOBS): the report past the bound is refused with an error naming the bound,
 * and B's application, its earlier jobs and its later reports are intact. (The bound of events a
 * second depends on timing: test/master/operations/appStatus.test.ts holds it.)
 *
 * Why test/security/ mirrors no one source file: see worker.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AppClient } from '../../backend/app/driver/AppClient.js';
import { WickContext } from '../../backend/app/index.js';
import { ReportListenerEvents } from '../../backend/protocol/app.js';
import { type RpcError, RpcErrorCode } from '../../backend/protocol/errors.js';
import type { WickListenerEvent } from '../../backend/protocol/listener.js';
import { MAX_ACTIVE_JOBS, MAX_REPORT_EVENTS } from '../../backend/protocol/statusReport.js';
import {
  executorsRegistered,
  type MasterState,
  type SharedCluster,
  startSharedCluster,
} from '../helpers/apps.js';
import { uiFetch } from '../helpers/webUi.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

let cluster: SharedCluster;
let a: WickContext;
let b: WickContext;

const clientOf = (wc: WickContext) => (wc as unknown as { client: AppClient }).client;
const appOf = (s: MasterState, id: string) =>
  s.activeApps.find((x) => x.id === id) ?? s.completedApps.find((x) => x.id === id);

async function jobsOf(appId: string): Promise<{ jobId: number; status: string }[]> {
  const res = await uiFetch(`${cluster.master.webUiUrl}/api/v1/applications/${appId}/jobs`);
  assert.equal(res.status, 200);
  return (await res.json()) as { jobId: number; status: string }[];
}

before(async () => {
  cluster = await startSharedCluster();
  const conf = { 'wick.cores.max': '1' };
  a = await WickContext.create({ master: cluster.url, appName: 'victim', conf });
  b = await WickContext.create({ master: cluster.url, appName: 'hostile', conf });
  await executorsRegistered(a, 1);
  await executorsRegistered(b, 1);
  await a.parallelize([1, 2], 2).count();
  await b.parallelize([1, 2], 2).count();
  await cluster.watch.waitFor(
    (s) =>
      appOf(s, a.appId)?.progress?.jobs.succeeded === 1 &&
      appOf(s, b.appId)?.progress?.jobs.succeeded === 1,
  );
});

after(async () => {
  await a?.stop();
  await b?.stop();
  await cluster?.stop();
});

test("a driver's report for another application is refused; that application is untouched", {
  timeout: 60_000,
}, async () => {
  const forged: WickListenerEvent[] = [
    { event: 'WickListenerJobStart', jobId: 999, stageIds: [], time: Date.now() },
    { event: 'WickListenerApplicationEnd', time: Date.now(), failure: 'forged' },
  ];
  const master = clientOf(b).master;
  assert.ok(master);
  await assert.rejects(
    master.ask(ReportListenerEvents({ appId: a.appId, events: forged })),
    (err: RpcError) => {
      assert.equal(err.code, RpcErrorCode.NotPermitted);
      assert.match(
        err.message,
        new RegExp(
          `^Not permitted: ReportListenerEvents of ${a.appId}: only the driver of ${a.appId} may send it`,
        ),
      );
      return true;
    },
  );
  // A's own next job is reported and shown: the refusal came first, and left nothing behind.
  await a.parallelize([1], 1).count();
  const s = await cluster.watch.waitFor((s) => appOf(s, a.appId)?.progress?.jobs.succeeded === 2);
  assert.equal(appOf(s, a.appId)?.state, 'RUNNING');
  const jobs = await jobsOf(a.appId);
  assert.deepEqual(
    jobs.map((j) => j.status),
    ['SUCCEEDED', 'SUCCEEDED'],
  );
  assert.ok(!jobs.some((j) => j.jobId === 999), 'the forged job is not there');
  const app = (await (
    await uiFetch(`${cluster.master.webUiUrl}/api/v1/applications/${a.appId}`)
  ).json()) as { attempts: { completed: boolean }[] };
  assert.equal(app.attempts[0]?.completed, false, 'the forged end was not applied');
});

test('a report past the bound of jobs running at once is refused naming it; the rest of the state stays', {
  timeout: 120_000,
}, async () => {
  const master = clientOf(b).master;
  assert.ok(master);
  // Jobs that start and never end, report after report. On a fast machine these reports can
  // pass the bound of events a second (MAX_REPORTED_EVENTS_PER_SECOND), which is not what this
  // test is about: like a driver, it sends that report again when the master says it may. (B's
  // own reporter does the same with its reports that these crowd out: its job below is shown.)
  const report = async (n: number, event: 'WickListenerJobStart' | 'WickListenerJobEnd') => {
    for (;;) {
      try {
        return await reportOnce(n, event);
      } catch (err) {
        if ((err as RpcError).code !== RpcErrorCode.RateLimited) throw err;
        const { retryAfterMs } = (err as RpcError).data as { retryAfterMs: number };
        await new Promise((r) => setTimeout(r, retryAfterMs));
      }
    }
  };
  const reportOnce = (n: number, event: 'WickListenerJobStart' | 'WickListenerJobEnd') =>
    master.ask(
      ReportListenerEvents({
        appId: b.appId,
        events: Array.from(
          { length: MAX_REPORT_EVENTS },
          (_, i): WickListenerEvent =>
            event === 'WickListenerJobStart'
              ? { event, jobId: 1_000_000 + n * MAX_REPORT_EVENTS + i, stageIds: [], time: 1 }
              : {
                  event,
                  jobId: 1_000_000 + n * MAX_REPORT_EVENTS + i,
                  result: 'JobFailed',
                  time: 2,
                },
        ),
      }),
      { timeout: 30_000 },
    );
  const taken = MAX_ACTIVE_JOBS / MAX_REPORT_EVENTS;
  for (let n = 0; n < taken; n++) await report(n, 'WickListenerJobStart');
  await assert.rejects(report(taken, 'WickListenerJobStart'), (err: RpcError) => {
    assert.equal(err.code, RpcErrorCode.InvalidParams);
    assert.equal(
      err.message,
      `ReportListenerEvents of ${b.appId} refused: more than ${MAX_ACTIVE_JOBS} jobs running at once; nothing of it was applied`,
    );
    return true;
  });
  let s = await cluster.watch.waitFor(
    (s) => appOf(s, b.appId)?.progress?.jobs.active === MAX_ACTIVE_JOBS,
  );
  assert.equal(appOf(s, b.appId)?.state, 'RUNNING', 'the application is as it was');
  assert.equal(appOf(s, b.appId)?.progress?.jobs.succeeded, 1, 'and so are its jobs');
  // Once those end, B's own next job is taken and shown. (Its first job is no longer kept: the
  // 10,000 that ended after it pushed it past wick.ui.retainedJobs, as they would in Spark.)
  for (let n = 0; n < taken; n++) await report(n, 'WickListenerJobEnd');
  await b.parallelize([1], 1).count();
  s = await cluster.watch.waitFor(
    (s) =>
      appOf(s, b.appId)?.progress?.jobs.succeeded === 1 &&
      appOf(s, b.appId)?.progress?.jobs.active === 0,
  );
  assert.equal(appOf(s, b.appId)?.state, 'RUNNING');
  const mine = (await jobsOf(b.appId)).filter((j) => j.jobId < 1_000_000);
  assert.deepEqual(
    mine.map((j) => [j.jobId, j.status]),
    [[1, 'SUCCEEDED']],
  );
});
