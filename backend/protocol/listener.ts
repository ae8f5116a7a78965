import { type Static, type TObject, type TProperties, Type } from '@sinclair/typebox';
import { Counter, Host, MAX_COUNTER, Message } from './bounds.js';
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
  },
);
export type WickListenerTaskEnd = Static<typeof WickListenerTaskEnd>;

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

/** Every event of a driver's listener bus. */
export const listenerEvents = [
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
