import { Type } from '@sinclair/typebox';
import {
  BoundedRecord,
  Host,
  KEY_PATTERN,
  MAX_ARG_LENGTH,
  MAX_COUNTER,
  MAX_ENV_ENTRIES,
  MAX_PATH_LENGTH,
  MAX_WORKER_CORES,
  Message,
  Url,
} from './bounds.js';
import { AppId, EndpointRefData } from './common.js';
import { AppCode, ShippedFiles } from './files.js';
import { boundary, defineMessage } from './registry.js';
import { ResourceAddresses } from './resources.js';

import { TaskCounter, TaskDescription, TaskError, TaskMetrics, TaskStateSchema } from './task.js';

/**
 * A driver and its executors (Spark's CoarseGrainedClusterMessages). What a task is (its source,
 * transformations, action, error and metrics) is in task.ts.
 */

// Executor → Driver

const e2d = boundary('Executor → Driver', 'executor', 'driver');

export const RetrieveAppConfig = defineMessage(
  e2d,
  'RetrieveAppConfig',
  "Asks the application's configuration.",
  {},
  { reply: () => AppConfig },
);

export const RegisterExecutor = defineMessage(
  e2d,
  'RegisterExecutor',
  'An executor offers its cores to the driver.',
  {
    executorId: Type.String({ minLength: 1, maxLength: 100 }),
    executor: EndpointRefData,
    hostname: Host,
    cores: Type.Integer({ minimum: 1, maximum: MAX_WORKER_CORES }),
    logUrls: BoundedRecord(KEY_PATTERN, Url(), 64, 'Its logs by name (stdout, stderr)'),
    resources: Type.Optional(ResourceAddresses),
  },
  { reply: () => [RegisteredExecutor, RegisterExecutorFailed] },
);

export const StatusUpdate = defineMessage(
  e2d,
  'StatusUpdate',
  "A task's state; with its result or error when it ended.",
  {
    executorId: Type.String({ maxLength: 100 }),
    taskId: TaskCounter,
    state: TaskStateSchema,
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(TaskError),
    durationMs: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_COUNTER })),
    metrics: Type.Optional(TaskMetrics),
  },
);

// Driver → Executor

const d2e = boundary('Driver → Executor', 'driver', 'executor');

export const AppConfig = defineMessage(d2e, 'AppConfig', 'The answer to RetrieveAppConfig.', {
  appId: AppId,
  props: BoundedRecord(
    KEY_PATTERN,
    Type.String({ maxLength: MAX_ARG_LENGTH }),
    MAX_ENV_ENTRIES,
    "The application's settings",
  ),
  /** The folder the application's modules resolve from. */
  appDir: Type.String({ maxLength: MAX_PATH_LENGTH }),
  code: Type.Optional(AppCode),
  files: Type.Optional(ShippedFiles),
});

export const AddFiles = defineMessage(
  d2e,
  'AddFiles',
  'Files the application added (wc.addFile) after the executor got AppConfig: fetch them from the file server.',
  { files: ShippedFiles },
);

export const RegisteredExecutor = defineMessage(
  d2e,
  'RegisteredExecutor',
  'The answer to RegisterExecutor: accepted.',
  {},
);

export const RegisterExecutorFailed = defineMessage(
  d2e,
  'RegisterExecutorFailed',
  'The answer to RegisterExecutor: refused.',
  { message: Message() },
);

export const LaunchTask = defineMessage(d2e, 'LaunchTask', 'Run a task.', {
  task: TaskDescription,
});

export const KillTask = defineMessage(d2e, 'KillTask', 'Stop a running or queued task.', {
  taskId: TaskCounter,
  reason: Message(),
  ifNotStarted: Type.Optional(
    Type.Boolean({
      description:
        'Only if it has not started: a queued task ends KILLED, a started one runs on and reports its end as usual (the driver takes queued tasks back to run them elsewhere)',
    }),
  ),
});

export const StopExecutor = defineMessage(
  d2e,
  'StopExecutor',
  'The application is done: exit.',
  {},
);
