/**
 * The driver's status tracker keeps running jobs and stages whole and the finished ones up to
 * wick.ui.retainedJobs / retainedStages, the oldest forgotten first: checked against the rule
 * written out naively, over random sequences of starts, ends and stage reruns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LiveListenerBus } from '../../../../backend/app/driver/LiveListenerBus.js';
import { AppStatusTracker } from '../../../../backend/app/driver/status/AppStatusTracker.js';

type Step =
  | { k: 'jobStart' }
  | { k: 'jobEnd'; pick: number; ok: boolean }
  | { k: 'stageSubmit'; stage: number }
  | { k: 'stageEnd'; pick: number; ok: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.constant({ k: 'jobStart' as const }),
  fc.record({ k: fc.constant('jobEnd' as const), pick: fc.nat(), ok: fc.boolean() }),
  fc.record({ k: fc.constant('stageSubmit' as const), stage: fc.nat({ max: 12 }) }),
  fc.record({ k: fc.constant('stageEnd' as const), pick: fc.nat(), ok: fc.boolean() }),
);

/** The rule, naively: ids in insertion order with their finished flag; trim after each end. */
class Model {
  jobs: { id: number; finished: boolean }[] = [];
  stages: { id: number; attempt: number; finished: boolean }[] = [];
  constructor(private readonly max: { jobs: number; stages: number }) {}
  static trim<T extends { finished: boolean }>(list: T[], max: number): T[] {
    let over = list.filter((e) => e.finished).length - max;
    return list.filter((e) => !(e.finished && over-- > 0));
  }
  endJob(id: number): void {
    const j = this.jobs.find((e) => e.id === id);
    if (!j) return;
    j.finished = true;
    this.jobs = Model.trim(this.jobs, this.max.jobs);
  }
  submitStage(id: number): number {
    const before = this.stages.find((e) => e.id === id);
    const attempt = before ? before.attempt + 1 : 0;
    this.stages = this.stages.filter((e) => e.id !== id);
    this.stages.push({ id, attempt, finished: false });
    return attempt;
  }
  endStage(id: number): void {
    const s = this.stages.find((e) => e.id === id);
    if (!s) return;
    s.finished = true;
    this.stages = Model.trim(this.stages, this.max.stages);
  }
}

test('finished jobs and stages are kept up to their bounds, the oldest forgotten first; running ones always', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 0, max: 4 }),
      fc.array(step, { maxLength: 120 }),
      (jobs, stages, steps) => {
        const bus = new LiveListenerBus();
        const tracker = new AppStatusTracker(bus, { jobs, stages });
        const model = new Model({ jobs, stages });
        let nextJob = 0;
        const time = 1;
        for (const s of steps) {
          if (s.k === 'jobStart') {
            const jobId = nextJob++;
            model.jobs.push({ id: jobId, finished: false });
            bus.post({ event: 'WickListenerJobStart', jobId, stageIds: [], time });
          } else if (s.k === 'jobEnd') {
            const running = model.jobs.filter((j) => !j.finished);
            const j = running[s.pick % Math.max(1, running.length)];
            if (!j) continue;
            model.endJob(j.id);
            bus.post({
              event: 'WickListenerJobEnd',
              jobId: j.id,
              result: s.ok ? 'JobSucceeded' : 'JobFailed',
              time,
            });
          } else if (s.k === 'stageSubmit') {
            const attempt = model.submitStage(s.stage);
            bus.post({
              event: 'WickListenerStageSubmitted',
              stageId: s.stage,
              stageAttemptId: attempt,
              jobId: 0,
              name: 'stage',
              numTasks: 1,
              time,
            });
          } else {
            const active = model.stages.filter((e) => !e.finished);
            const st = active[s.pick % Math.max(1, active.length)];
            if (!st) continue;
            model.endStage(st.id);
            bus.post({
              event: 'WickListenerStageCompleted',
              stageId: st.id,
              stageAttemptId: st.attempt,
              name: 'stage',
              numTasks: 1,
              time,
              ...(s.ok ? {} : { failureReason: 'boom' }),
            });
          }
          for (const j of model.jobs)
            assert.equal(
              tracker.getJobInfo(j.id)?.status === 'RUNNING',
              !j.finished,
              `job ${j.id}`,
            );
          assert.deepEqual(tracker.size, { jobs: model.jobs.length, stages: model.stages.length });
          assert.deepEqual(
            tracker.getActiveStageIds(),
            model.stages.filter((e) => !e.finished).map((e) => e.id),
          );
          for (const e of model.stages) assert.ok(tracker.getStageInfo(e.id), `stage ${e.id}`);
        }
      },
    ),
    { numRuns: 500 },
  );
});
