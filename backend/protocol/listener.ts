import { type Static, type TObject, type TProperties, Type } from '@sinclair/typebox';
import {
  Counter,
  Host,
  MAX_COUNTER,
  MAX_KEY_LENGTH,
  MAX_MESSAGE_LENGTH,
  Message,
} from './bounds.js';
import { WorkerId } from './common.js';
import { TaskMetrics } from './task.js';

/**
 * What happens in a driver, as its listener bus carries it (Spark's SparkListener.scala): the
 * scheduler's events that its parts and the application's listeners hear. Each is a schema, as
 * a message is, because they are to leave the driver (an event log, a report to the master) and
 * be read back; for now they travel in the driver only. Spark's names, with Wick for Spark;
 * `event` names each, as the `Event` field of Spark's event log does.
 */

const ExecutorIdField = Type.String({ minLength: 1, maxLength: 100 });

function event<K extends string, F extends TProperties>(name: K, description: string, fields: F) {
  return Type.Object(
    { event: Type.Literal(name), ...fields },
    { additionalProperties: false, description },
  );
}

/** A task ended (Spark's SparkListenerTaskEnd), told before the scheduler acts on its end. */
export const WickListenerTaskEnd = event(
  'WickListenerTaskEnd',
  'A task ended: how, on which executor, how long it ran and what it measured.',
  {
    taskId: Counter(),
    jobId: Type.Optional(Counter("The scheduler's job of the task (a stage attempt's task set)")),
    executorId: ExecutorIdField,
    state: Type.Union(
      [
        Type.Literal('FINISHED'),
        Type.Literal('FAILED'),
        Type.Literal('KILLED'),
        Type.Literal('LOST'),
      ],
      { description: 'TaskState: one of its ends' },
    ),
    durationMs: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_COUNTER })),
    metrics: Type.Optional(TaskMetrics),
    stageId: Type.Optional(Counter('The stage of the task (a job stage, as JobStart lists it)')),
    stageAttemptId: Type.Optional(Counter("The stage's attempt (0 for its first run)")),
    index: Type.Optional(Counter('The partition the task computed')),
    error: Type.Optional(
      Message('How a task that did not finish ended: its error, with its stack'),
    ),
  },
);
export type WickListenerTaskEnd = Static<typeof WickListenerTaskEnd>;

const Time = Type.Number({ minimum: 0, maximum: MAX_COUNTER, description: 'ms since the epoch' });
const StageName = Type.String({ maxLength: 200 });
const MAX_JOB_STAGES = 10_000;

/** A task was launched on an executor (Spark's SparkListenerTaskStart). */
export const WickListenerTaskStart = event(
  'WickListenerTaskStart',
  'A task of a stage was launched on an executor.',
  {
    taskId: Counter(),
    stageId: Counter(),
    stageAttemptId: Counter(),
    index: Counter('The partition the task computes'),
    attempt: Counter("The task's attempt at its partition (0 first)"),
    executorId: ExecutorIdField,
    time: Time,
  },
);
export type WickListenerTaskStart = Static<typeof WickListenerTaskStart>;

/** An action started a job (Spark's SparkListenerJobStart): its stages, skipped ones included. */
export const WickListenerJobStart = event(
  'WickListenerJobStart',
  'An action started a job: the stages it needs, its ResultStage last.',
  {
    jobId: Counter(),
    stageIds: Type.Array(Counter(), { maxItems: MAX_JOB_STAGES }),
    time: Time,
  },
);
export type WickListenerJobStart = Static<typeof WickListenerJobStart>;

/** A job ended (Spark's SparkListenerJobEnd): succeeded, or failed with its reason. */
export const WickListenerJobEnd = event(
  'WickListenerJobEnd',
  "A job ended: JobSucceeded, or JobFailed with the failure's message.",
  {
    jobId: Counter(),
    result: Type.Union([Type.Literal('JobSucceeded'), Type.Literal('JobFailed')]),
    error: Type.Optional(Message()),
    time: Time,
  },
);
export type WickListenerJobEnd = Static<typeof WickListenerJobEnd>;

/** A stage's attempt was submitted (Spark's SparkListenerStageSubmitted). */
export const WickListenerStageSubmitted = event(
  'WickListenerStageSubmitted',
  'A stage attempt was submitted with its tasks (a rerun: only its missing partitions).',
  {
    stageId: Counter(),
    stageAttemptId: Counter(),
    jobId: Counter('The job that submitted it'),
    name: StageName,
    numTasks: Counter(),
    time: Time,
    parentIds: Type.Optional(
      Type.Array(Counter(), {
        maxItems: MAX_JOB_STAGES,
        description: "The stages whose shuffle output it reads (Spark's StageInfo.parentIds)",
      }),
    ),
  },
);
export type WickListenerStageSubmitted = Static<typeof WickListenerStageSubmitted>;

/** A stage's attempt ended (Spark's SparkListenerStageCompleted), with why if it failed. */
export const WickListenerStageCompleted = event(
  'WickListenerStageCompleted',
  'A stage attempt ended: done, or failed with its reason (a fetch failure reruns it).',
  {
    stageId: Counter(),
    stageAttemptId: Counter(),
    name: StageName,
    numTasks: Counter(),
    time: Time,
    failureReason: Type.Optional(Message()),
  },
);
export type WickListenerStageCompleted = Static<typeof WickListenerStageCompleted>;

/** The application started (Spark's SparkListenerApplicationStart): the first event of a log. */
export const WickListenerApplicationStart = event(
  'WickListenerApplicationStart',
  'The application registered with its master: the first event of its log.',
  {
    appName: Type.String({ maxLength: 200 }),
    appId: Type.String({ maxLength: 200 }),
    time: Time,
    user: Type.String({ maxLength: 200 }),
  },
);
export type WickListenerApplicationStart = Static<typeof WickListenerApplicationStart>;

/** The application ended (Spark's SparkListenerApplicationEnd): the last event of a log. */
export const WickListenerApplicationEnd = event(
  'WickListenerApplicationEnd',
  'The application stopped: the last event of its log, with its failure if it failed.',
  {
    time: Time,
    failure: Type.Optional(Message()),
  },
);
export type WickListenerApplicationEnd = Static<typeof WickListenerApplicationEnd>;

/** An executor registered with the driver (Spark's SparkListenerExecutorAdded). */
export const WickListenerExecutorAdded = event(
  'WickListenerExecutorAdded',
  'An executor registered with the driver and offers its cores.',
  {
    executorId: ExecutorIdField,
    host: Host,
    cores: Type.Integer({ minimum: 1, maximum: MAX_COUNTER }),
  },
);
export type WickListenerExecutorAdded = Static<typeof WickListenerExecutorAdded>;

/**
 * A registered executor is gone (Spark's SparkListenerExecutorRemoved), and its map outputs with
 * it unless a shuffle service serves them and its worker was not lost.
 */
export const WickListenerExecutorRemoved = event(
  'WickListenerExecutorRemoved',
  'A registered executor is gone; workerLost when its whole worker went with it.',
  {
    executorId: ExecutorIdField,
    reason: Message(),
    workerLost: Type.Boolean(),
  },
);
export type WickListenerExecutorRemoved = Static<typeof WickListenerExecutorRemoved>;

/**
 * A worker the application used was lost (the master's WorkerRemoved; Spark's
 * DAGScheduler.workerRemoved): what its shuffle service served is gone.
 */
export const WickListenerWorkerRemoved = event(
  'WickListenerWorkerRemoved',
  'A worker the application used was lost, with whatever its shuffle service served.',
  {
    workerId: WorkerId,
    host: Host,
    message: Message(),
  },
);
export type WickListenerWorkerRemoved = Static<typeof WickListenerWorkerRemoved>;

/** Entries of an EnvironmentUpdate's properties, and the length of one value. */
export const MAX_ENVIRONMENT_ENTRIES = 4096;
const PropertyValue = Type.String({ maxLength: MAX_MESSAGE_LENGTH });

/**
 * The application's settings and runtime (Spark's SparkListenerEnvironmentUpdate), posted right
 * after ApplicationStart: what `/api/v1/…/environment` shows. Secrets are redacted by the driver
 * before it posts (a key naming a secret, password or token), as Spark's spark.redaction.regex.
 */
export const WickListenerEnvironmentUpdate = event(
  'WickListenerEnvironmentUpdate',
  "The application's settings (secrets redacted) and the runtime it runs on.",
  {
    runtime: Type.Object(
      {
        nodeVersion: Type.String({ maxLength: 100 }),
        platform: Type.String({ maxLength: 100 }),
        wickVersion: Type.String({ maxLength: 100 }),
      },
      { additionalProperties: false },
    ),
    wickProperties: Type.Array(
      Type.Object(
        { key: Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH }), value: PropertyValue },
        { additionalProperties: false },
      ),
      { maxItems: MAX_ENVIRONMENT_ENTRIES, description: 'The settings, sorted by key' },
    ),
  },
);
export type WickListenerEnvironmentUpdate = Static<typeof WickListenerEnvironmentUpdate>;

/** Every event of a driver's listener bus. */
export const listenerEvents = [
  WickListenerApplicationStart,
  WickListenerApplicationEnd,
  WickListenerEnvironmentUpdate,
  WickListenerJobStart,
  WickListenerJobEnd,
  WickListenerStageSubmitted,
  WickListenerStageCompleted,
  WickListenerTaskStart,
  WickListenerTaskEnd,
  WickListenerExecutorAdded,
  WickListenerExecutorRemoved,
  WickListenerWorkerRemoved,
] as const satisfies readonly TObject[];

export const WickListenerEvent = Type.Union([...listenerEvents], {
  description: "An event of a driver's listener bus",
});
export type WickListenerEvent = Static<typeof WickListenerEvent>;
/** An event's name (its `event` field). */
export type WickListenerEventName = WickListenerEvent['event'];
/** The event named `K`. */
export type WickListenerEventOf<K extends WickListenerEventName> = Extract<
  WickListenerEvent,
  { event: K }
>;
