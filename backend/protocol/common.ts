import { type Static, Type } from '@sinclair/typebox';
import { type ApplicationState, ApplicationStates } from './appStates.js';
import {
  BoundedRecord,
  MAX_ARG_LENGTH,
  MAX_ARGS,
  MAX_CLUSTER_CORES,
  MAX_ENV_ENTRIES,
  MAX_FAILURE_MESSAGE_LENGTH,
  MAX_FAILURE_STACK_LENGTH,
  MAX_ID_LENGTH,
  MAX_INT32,
  MAX_KEY_LENGTH,
  MAX_MEMORY_MB,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_SOURCE_LINE,
  MAX_URL_LENGTH,
  MAX_WORKER_CORES,
} from './bounds.js';
import { FileRef } from './files.js';
import { ResourceAddresses, ResourceRequirements } from './resources.js';
import { EndpointRefData as EndpointRefDataSchema } from './rpc.js';

/**
 * Values shared by the deploy messages. Enums keep Spark's names and values, so anyone who knows
 * Spark's standalone mode reads them at sight.
 */

const enumOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );

export const WorkerStates = ['ALIVE', 'DEAD', 'DECOMMISSIONED', 'UNKNOWN'] as const;
export type WorkerState = (typeof WorkerStates)[number];
export const WorkerStateSchema = enumOf(WorkerStates, 'WorkerState');

export const ExecutorStates = [
  'LAUNCHING',
  'RUNNING',
  'KILLED',
  'FAILED',
  'LOST',
  'EXITED',
] as const;
export type ExecutorState = (typeof ExecutorStates)[number];
export const ExecutorStateSchema = enumOf(ExecutorStates, 'ExecutorState');
export const isExecutorFinished = (s: ExecutorState): boolean =>
  s === 'KILLED' || s === 'FAILED' || s === 'LOST' || s === 'EXITED';

export { type ApplicationState, ApplicationStates };
export const ApplicationStateSchema = enumOf(ApplicationStates, 'ApplicationState');

/** A position in a source file: 1-based line and column, as Node's stack traces print them. */
export const SourceLocation = Type.Object(
  {
    file: Type.String({
      minLength: 1,
      maxLength: MAX_PATH_LENGTH,
      description: "An absolute path on the driver's machine",
    }),
    line: Type.Integer({ minimum: 1, maximum: MAX_SOURCE_LINE }),
    column: Type.Integer({ minimum: 1, maximum: MAX_SOURCE_LINE }),
  },
  { additionalProperties: false },
);
export type SourceLocation = Static<typeof SourceLocation>;

/** A task that failed its job: its stage and partition (Spark's TaskContext names). */
export const FailedTask = Type.Object(
  {
    stageId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
    partitionId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
  },
  { additionalProperties: false },
);
export type FailedTask = Static<typeof FailedTask>;

/**
 * Why an application FAILED, as its driver saw it (or the master, when the driver's connection
 * dropped without a word): what the user needs to find the line that threw.
 */
export const AppFailure = Type.Object(
  {
    message: Type.String({
      maxLength: MAX_FAILURE_MESSAGE_LENGTH,
      description:
        'The error as `<name>: <message>` (its first line is what a notification quotes)',
    }),
    stack: Type.Optional(
      Type.String({
        maxLength: MAX_FAILURE_STACK_LENGTH,
        description: "The error's stack, source-mapped to the application's files",
      }),
    ),
    /**
     * The first frame of the stack in the user's own code (not node:internal, node_modules or
     * Wick's own), source-mapped to the original file.
     */
    location: Type.Optional(SourceLocation),
    /** The task whose failures aborted the job (Debug Failed Task reruns it under a debugger). */
    task: Type.Optional(FailedTask),
  },
  { additionalProperties: false },
);
export type AppFailure = Static<typeof AppFailure>;

export const DriverStates = [
  'SUBMITTED',
  'RUNNING',
  'FINISHED',
  'RELAUNCHING',
  'UNKNOWN',
  'KILLED',
  'FAILED',
  'ERROR',
] as const;
export type DriverState = (typeof DriverStates)[number];
export const DriverStateSchema = enumOf(DriverStates, 'DriverState');
export const isDriverFinished = (s: DriverState): boolean =>
  s === 'FINISHED' || s === 'KILLED' || s === 'FAILED' || s === 'ERROR';

export const RecoveryStates = ['STANDBY', 'ALIVE', 'RECOVERING', 'COMPLETING_RECOVERY'] as const;
export type RecoveryState = (typeof RecoveryStates)[number];
export const RecoveryStateSchema = enumOf(RecoveryStates, 'RecoveryState');

const Id = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description });
export const AppId = Id('Application id, app-yyyyMMddHHmmss-NNNN');
export const DriverId = Id('Driver id, driver-yyyyMMddHHmmss-NNNN');
export const WorkerId = Id('Worker id, worker-yyyyMMddHHmmss-host-port');
export const ExecId = Type.Integer({
  minimum: 0,
  maximum: MAX_INT32,
  description: 'Executor id, unique within its application',
});
/** Cores of one worker, executor or driver, or in use on one worker. */
export const Cores = Type.Integer({
  minimum: 0,
  maximum: MAX_WORKER_CORES,
  description: 'CPU cores',
});
/** What a worker offers: at least one core. */
export const WorkerCores = Type.Integer({
  minimum: 1,
  maximum: MAX_WORKER_CORES,
  description: 'CPU cores',
});
/** An application's cores across the cluster. */
export const ClusterCores = Type.Integer({
  minimum: 0,
  maximum: MAX_CLUSTER_CORES,
  description: 'CPU cores, across the cluster',
});
export const MemoryMB = Type.Integer({
  minimum: 0,
  maximum: MAX_MEMORY_MB,
  description: 'Memory in MiB',
});
/** What a worker offers: at least 1 MiB. */
export const WorkerMemoryMB = Type.Integer({
  minimum: 1,
  maximum: MAX_MEMORY_MB,
  description: 'Memory in MiB',
});

/** What to run: argv with {{VARIABLES}} the worker substitutes, and extra environment. */
export const Command = Type.Object(
  {
    argv: Type.Array(Type.String({ maxLength: MAX_ARG_LENGTH }), {
      minItems: 1,
      maxItems: MAX_ARGS,
      description: 'Program and arguments',
    }),
    env: BoundedRecord(
      // Linux takes any name without = or NUL; a portable one is letters, digits and _.
      `^[^=\\u0000]{1,${MAX_KEY_LENGTH}}$`,
      Type.String({ maxLength: MAX_ARG_LENGTH }),
      MAX_ENV_ENTRIES,
      'Extra environment variables',
    ),
  },
  { additionalProperties: false },
);
export type Command = Static<typeof Command>;

export const ApplicationDescription = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }),
    user: Type.String({ maxLength: MAX_NAME_LENGTH }),
    maxCores: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_CLUSTER_CORES, description: 'wick.cores.max' }),
    ),
    memoryPerExecutorMB: MemoryMB,
    coresPerExecutor: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_WORKER_CORES, description: 'wick.executor.cores' }),
    ),
    command: Command,
    driverUrl: Type.Optional(
      Type.String({
        maxLength: MAX_URL_LENGTH,
        description: "The driver endpoint's wick:// URI, substituted for {{DRIVER_URL}}",
      }),
    ),
    resourceReqsPerExecutor: Type.Optional(ResourceRequirements),
  },
  { additionalProperties: false },
);
export type ApplicationDescription = Static<typeof ApplicationDescription>;

export const DriverDescription = Type.Object(
  {
    appPath: Type.String({
      minLength: 1,
      maxLength: MAX_PATH_LENGTH,
      description:
        'The application file: copied into the driver dir from a disk the worker shares, or, with `shipped`, the name of the file submitted',
    }),
    shipped: Type.Optional(
      Type.Object(FileRef.properties, {
        additionalProperties: false,
        description:
          "The ShippedAppManifest the submit uploaded to the masters: the worker fetches it and the files it names from its master's file server",
      }),
    ),
    mem: MemoryMB,
    cores: Type.Integer({ minimum: 1, maximum: MAX_WORKER_CORES }),
    supervise: Type.Boolean(),
    command: Command,
  },
  { additionalProperties: false },
);
export type DriverDescription = Static<typeof DriverDescription>;

export const ExecutorDescription = Type.Object(
  {
    appId: AppId,
    execId: ExecId,
    cores: Cores,
    state: ExecutorStateSchema,
    resources: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);
export type ExecutorDescription = Static<typeof ExecutorDescription>;

export const EndpointRefData = EndpointRefDataSchema;
export type EndpointRefData = Static<typeof EndpointRefDataSchema>;
