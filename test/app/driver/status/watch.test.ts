/**
 * Watching a job, on real executors (a WickContext in this process, a real master and 2 workers):
 * a job with a shuffle tells its listeners of the job, each stage attempt and each task in the
 * order they happen, the status tracker follows it, and the event log holds every event the bus
 * carried, in order, readable back after stop.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { WickContext } from '../../../../backend/app/index.js';
import { readEventLog } from '../../../../backend/eventlog/readEventLog.js';
import { WickListenerEvent } from '../../../../backend/protocol/listener.js';
import {
  eventually,
  executorsRegistered,
  type SharedCluster,
  startSharedCluster,
} from '../../../helpers/apps.js';

for (const k of ['WICK_MASTER', 'WICK_SUBMIT_CONF', 'WICK_APP_NAME', 'WICK_APP_DIR'])
  delete process.env[k];

let cluster: SharedCluster;
const logs = mkdtempSync(join(tmpdir(), 'wick-test-eventlog-'));

before(async () => {
  cluster = await startSharedCluster();
});

after(async () => {
  await cluster?.stop();
  rmSync(logs, { recursive: true, force: true });
});

test('a job with a shuffle: its events in order to listeners, the tracker, and the event log', {
  timeout: 120_000,
}, async () => {
  const wc = await WickContext.create({
    master: cluster.url,
    appName: 'watched',
    conf: { 'wick.eventLog.enabled': 'true', 'wick.eventLog.dir': logs },
  });
  const heard: { kind: string; e: Record<string, unknown> }[] = [];
  const rec = (kind: string) => (e: object) =>
    heard.push({ kind, e: e as Record<string, unknown> });
  const progress: number[][] = [];
  try {
    await executorsRegistered(wc, 2);
    const tracker = wc.statusTracker();
    const off = wc.addListener({
      onJobStart: rec('JobStart'),
      onJobEnd: rec('JobEnd'),
      onStageSubmitted: rec('StageSubmitted'),
      onStageCompleted: (e) => {
        rec('StageCompleted')(e);
        const s = tracker.getStageInfo(e.stageId);
        if (s) progress.push([s.numTasks, s.numCompletedTasks, s.numActiveTasks]);
      },
      onTaskStart: rec('TaskStart'),
      onTaskEnd: rec('TaskEnd'),
    });
    const counts = await wc
      .parallelize(['a b', 'b c', 'c a', 'a a'], 4)
      .flatMap((l: string) => l.split(' '))
      .map((w: string): [string, number] => [w, 1])
      .reduceByKey((a: number, b: number) => a + b, 3)
      .collect();
    off();
    assert.deepEqual(
      new Map(counts as [string, number][]),
      new Map([
        ['a', 4],
        ['b', 2],
        ['c', 2],
      ]),
    );

    // The job: one map stage of 4 tasks, then its ResultStage of 3, each task started then ended.
    const kinds = heard.map((h) => h.kind);
    assert.equal(kinds[0], 'JobStart');
    assert.equal(kinds.at(-1), 'JobEnd');
    assert.equal(heard.at(-1)?.e.result, 'JobSucceeded');
    const jobStart = heard[0]?.e as { jobId: number; stageIds: number[] };
    assert.equal(jobStart.stageIds.length, 2, 'a map stage and the ResultStage');
    const [mapStage, resultStage] = jobStart.stageIds;
    const submitted = heard.filter((h) => h.kind === 'StageSubmitted').map((h) => h.e);
    assert.deepEqual(
      submitted.map((s) => [s.stageId, s.stageAttemptId, s.numTasks, s.jobId]),
      [
        [mapStage, 0, 4, jobStart.jobId],
        [resultStage, 0, 3, jobStart.jobId],
      ],
    );
    for (const stageId of [mapStage, resultStage]) {
      const of = (kind: string) =>
        heard.filter((h) => h.kind === kind && h.e.stageId === stageId).map((h) => h.e);
      const starts = of('TaskStart');
      const ends = of('TaskEnd');
      const n = stageId === mapStage ? 4 : 3;
      assert.equal(starts.length, n, `stage ${stageId}: a start per task`);
      assert.deepEqual(
        ends.map((e) => e.taskId).sort(),
        starts.map((e) => e.taskId).sort(),
        `stage ${stageId}: an end per started task`,
      );
      assert.ok(ends.every((e) => e.state === 'FINISHED'));
      assert.deepEqual(starts.map((e) => e.index).sort(), [...Array(n).keys()]);
      // Every task of the stage starts after it is submitted and ends before it completes.
      const at = (kind: string) =>
        kinds.findIndex((k, i) => k === kind && heard[i]?.e.stageId === stageId);
      const lastEnd = kinds.findLastIndex(
        (k, i) => k === 'TaskEnd' && heard[i]?.e.stageId === stageId,
      );
      assert.ok(at('StageSubmitted') < at('TaskStart'));
      assert.ok(lastEnd < at('StageCompleted'));
    }
    // The tracker, at each stage's end: every task done, none running.
    assert.deepEqual(progress, [
      [4, 4, 0],
      [3, 3, 0],
    ]);
    assert.deepEqual(tracker.getActiveJobIds(), []);
    assert.deepEqual(tracker.getActiveStageIds(), []);
    assert.equal(tracker.getJobInfo(jobStart.jobId)?.status, 'SUCCEEDED');
    assert.deepEqual(tracker.getJobInfo(jobStart.jobId)?.stageIds, [mapStage, resultStage]);
  } finally {
    await wc.stop();
  }

  // The event log: named by the application, no longer in progress once the context has closed
  // (stop() returns before, at the end of its turn: see WickContext.close), every event valid and
  // in the order the listeners heard them, between ApplicationStart and ApplicationEnd.
  await eventually(AbortSignal.timeout(30_000), () =>
    existsSync(join(logs, wc.appId)) ? true : undefined,
  );
  assert.deepEqual(readdirSync(logs), [wc.appId]);
  assert.equal(wc.eventLogPath, join(logs, wc.appId));
  const problems: string[] = [];
  const events: Record<string, unknown>[] = [];
  for await (const e of readEventLog(join(logs, wc.appId), {
    onProblem: (p) => problems.push(p.message),
  }))
    events.push(e as Record<string, unknown>);
  assert.deepEqual(problems, []);
  for (const e of events) assert.ok(Value.Check(WickListenerEvent, e), JSON.stringify(e));
  assert.equal(events[0]?.event, 'WickListenerApplicationStart');
  assert.equal(events[0]?.appId, wc.appId);
  assert.equal(events[0]?.appName, 'watched');
  assert.equal(events.at(-1)?.event, 'WickListenerApplicationEnd');
  assert.equal(events.at(-1)?.failure, undefined);
  const jobEvents = events.filter((e) => /^WickListener(Job|Stage|Task)/.test(String(e.event)));
  assert.deepEqual(
    jobEvents.map((e) => String(e.event).replace('WickListener', '')),
    heard.map((h) => h.kind),
  );
  assert.ok(events.some((e) => e.event === 'WickListenerExecutorAdded'));
  assert.equal(existsSync(join(logs, `${wc.appId}.inprogress`)), false);
});
