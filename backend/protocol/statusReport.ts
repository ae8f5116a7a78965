import { type Static, Type } from '@sinclair/typebox';
import { Counter, MAX_COUNTER, Message } from './bounds.js';

/**
 * What a driver's report to the master (ReportListenerEvents, app.ts) carries besides its
 * listener events, and the report's bounds, which both sides read here. A driver sends each
 * task's start and end as they are for up to REPORTED_TASKS_PER_SECOND tasks a second; the other
 * tasks are coalesced, per stage attempt and executor, into counts and sums (TaskEndsCoalesced),
 * so that the master's numbers stay exact while the cost of a job of many short tasks stays
 * bounded on both sides.
 */

/** Events in one report. */
export const MAX_REPORT_EVENTS = 2000;
/** Coalesced entries in one report (stage attempts × executors that ran tasks in its window). */
export const MAX_REPORT_COALESCED = 2000;
/** Events a master takes from one application in a second; a driver sends fewer. */
export const MAX_REPORTED_EVENTS_PER_SECOND = 20_000;
/** Tasks a second a driver reports one by one (their start and end); the rest are coalesced. */
export const REPORTED_TASKS_PER_SECOND = 1000;
/** Jobs, stage attempts and executors running at once that a master follows for one app. */
export const MAX_ACTIVE_JOBS = 10_000;
export const MAX_ACTIVE_STAGES = 10_000;
export const MAX_LIVE_EXECUTORS = 10_000;

const Sum = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });

/** Tasks of one stage attempt on one executor, reported as counts and sums rather than one by one. */
export const TaskEndsCoalesced = Type.Object(
  {
    stageId: Counter(),
    stageAttemptId: Counter(),
    executorId: Type.String({ minLength: 1, maxLength: 100 }),
    started: Counter('Tasks launched'),
    finished: Counter('Tasks that ended FINISHED'),
    failed: Counter('Tasks that ended FAILED or LOST'),
    killed: Counter('Tasks that ended KILLED'),
    executorRunTimeMs: Sum,
    shuffleReadBytes: Sum,
    shuffleReadRecords: Sum,
    shuffleWriteBytes: Sum,
    shuffleWriteRecords: Sum,
    memoryBytesSpilled: Sum,
    diskBytesSpilled: Sum,
    lastError: Type.Optional(Message('The error of the last of these tasks that failed')),
  },
  { additionalProperties: false, description: 'Tasks of one stage attempt and executor, summed' },
);
export type TaskEndsCoalesced = Static<typeof TaskEndsCoalesced>;
