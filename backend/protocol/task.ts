import { type Static, Type } from '@sinclair/typebox';
import {
  BoundedRecord,
  KEY_PATTERN,
  MAX_COUNTER,
  MAX_INT32,
  MAX_MESSAGE_LENGTH,
  MAX_NAME_LENGTH,
  MAX_PATH_LENGTH,
  MAX_STACK_LENGTH,
  truncateMessage,
} from './bounds.js';
import { SourceLocation } from './common.js';
import { MAX_SHIPPED_FILES, ShippedPath } from './files.js';
import { ResourceAddresses } from './resources.js';

/**
 * What a task is, as a driver and its executors exchange it (the payloads of LaunchTask and
 * StatusUpdate in executor.ts): a task names one partition of a source, the narrow
 * transformations to apply to it, and what to compute from the result; functions travel as
 * source text with the values they use. Its end carries a TaskError and TaskMetrics.
 */

export const TaskStates = ['LAUNCHING', 'RUNNING', 'FINISHED', 'FAILED', 'KILLED', 'LOST'] as const;
export type TaskState = (typeof TaskStates)[number];
export const TaskStateSchema = Type.Union(
  TaskStates.map((s) => Type.Literal(s)),
  { description: 'TaskState' },
);

/** A function's source text, or one declaration it needs. */
const MAX_FUNCTION_SOURCE = 1024 * 1024;
/** Narrow transformations one task applies (a chain of map, filter, …). */
const MAX_TRANSFORMATIONS = 1000;
/** Where a range source starts and ends: what a double holds exactly. */
const RangeBound = Type.Number({ minimum: -MAX_COUNTER, maximum: MAX_COUNTER });
/** A task id or a count of a task's: what a double holds exactly. */
export const TaskCounter = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });

/** A function as source text, and the values it reads through its last parameter. */
export const FunctionSpec = Type.Object(
  {
    source: Type.String({
      minLength: 1,
      maxLength: MAX_FUNCTION_SOURCE,
      description: 'A function expression, e.g. "(x, env) => x * env.k"',
    }),
    env: Type.Optional(Type.Unknown({ description: 'JSON values passed as the last argument' })),
    module: Type.Optional(ShippedPath),
    bindings: Type.Optional(
      BoundedRecord(
        KEY_PATTERN,
        ShippedPath,
        1000,
        "Free names of the source and the module of the application's code tree to ask each of (its binding lookup)",
      ),
    ),
    defs: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_FUNCTION_SOURCE }), {
        maxItems: 200,
        description: 'Declarations (functions of the main module) evaluated before the source',
      }),
    ),
    origin: Type.Optional(
      Type.Object(SourceLocation.properties, {
        additionalProperties: false,
        description:
          "Where the first of `defs`, else the source, begins in the application's original file on the driver's machine. The driver laid the texts out (line breaks and indentation) as the original was, so an executor that compiles `defs` joined, then `return (`, the source and `);` there (vm filename, lineOffset, columnOffset) has stacks that name the user's file, line and column.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type FunctionSpec = Static<typeof FunctionSpec>;

/**
 * How a shuffle's records are combined per key (Spark's Aggregator): a value becomes a combiner
 * with createCombiner (absent: the value itself; with `zero`: mergeValue(copy of zero, value)),
 * more values join it with mergeValue, and combiners of several map outputs with mergeCombiners.
 */
export const Aggregator = Type.Object(
  {
    createCombiner: Type.Optional(FunctionSpec),
    mergeValue: FunctionSpec,
    mergeCombiners: FunctionSpec,
    zero: Type.Optional(Type.Unknown({ description: 'JSON value copied for each key' })),
  },
  { additionalProperties: false },
);
export type Aggregator = Static<typeof Aggregator>;

/** The most range bounds (reducers − 1) and reducers of one shuffle. */
export const MAX_SHUFFLE_PARTITIONS = 100_000;
/** The most map outputs one reducer reads. */
export const MAX_MAP_OUTPUTS = 100_000;

/** Which reducer a record goes to (docs/protocol.md, "Shuffle"). */
export const PartitionerSpec = Type.Union([
  Type.Object(
    { kind: Type.Literal('hash') },
    { additionalProperties: false, description: "FNV-1a of the key's canonical JSON, mod n" },
  ),
  Type.Object(
    {
      kind: Type.Literal('range'),
      bounds: Type.Array(Type.Unknown(), { maxItems: MAX_SHUFFLE_PARTITIONS }),
      ascending: Type.Boolean(),
    },
    { additionalProperties: false, description: 'The first bound ≥ the key, in key order' },
  ),
  Type.Object(
    { kind: Type.Literal('roundRobin') },
    { additionalProperties: false, description: 'Whole records, dealt in turn (repartition)' },
  ),
]);
export type PartitionerSpec = Static<typeof PartitionerSpec>;

/** Where one map output's block for a reducer is, and what it must hash to. */
export const ShuffleBlockRef = Type.Object(
  {
    location: Type.String({ minLength: 1, maxLength: 300, description: 'host:port' }),
    executorId: Type.String({ minLength: 1, maxLength: 100 }),
    mapId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
    size: TaskCounter,
    crc32: Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 }),
  },
  { additionalProperties: false },
);
export type ShuffleBlockRef = Static<typeof ShuffleBlockRef>;

/** A narrow transformation. */
export const Transformation = Type.Object(
  {
    kind: Type.Union([
      Type.Literal('map'),
      Type.Literal('filter'),
      Type.Literal('flatMap'),
      Type.Literal('mapPartitions'),
      Type.Literal('mapValues'),
      Type.Literal('flatMapValues'),
      Type.Literal('keyBy'),
    ]),
    fn: FunctionSpec,
  },
  { additionalProperties: false },
);
export type Transformation = Static<typeof Transformation>;

/** Where the elements of one parent partition come from (a coalesced partition has several). */
const LeafSource = Type.Union([
  Type.Object(
    { kind: Type.Literal('array'), data: Type.Array(Type.Unknown()) },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      kind: Type.Literal('range'),
      start: RangeBound,
      end: RangeBound,
      step: RangeBound,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      kind: Type.Literal('textFile'),
      path: Type.String({
        maxLength: MAX_PATH_LENGTH,
        description:
          "An absolute path, read as it is on the executor's host; or the name of a file the application added (AppConfig.files, AddFiles), read from the executor's copy of it",
      }),
      start: TaskCounter,
      end: TaskCounter,
    },
    {
      additionalProperties: false,
      description: 'The lines that start in [start, end) bytes of a file',
    },
  ),
  Type.Object(
    {
      kind: Type.Literal('shuffle'),
      shuffleId: TaskCounter,
      reduceId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
      blocks: Type.Array(ShuffleBlockRef, { maxItems: MAX_MAP_OUTPUTS }),
      aggregator: Type.Optional(Aggregator),
      mapSideCombine: Type.Optional(Type.Boolean()),
      ascending: Type.Optional(
        Type.Boolean({ description: "Sorted by key (sortByKey): the order's direction" }),
      ),
    },
    {
      additionalProperties: false,
      description:
        "A reducer's records: its block of every map output, fetched by the executor before the task runs",
    },
  ),
]);

/** The most parent partitions one coalesced partition holds. */
export const MAX_COALESCED_PARTS = 100_000;

/** Where a partition's elements come from. */
export const PartitionSource = Type.Union([
  ...LeafSource.anyOf,
  Type.Object(
    {
      kind: Type.Literal('coalesced'),
      parts: Type.Array(
        Type.Object(
          {
            source: LeafSource,
            transformations: Type.Array(Transformation, { maxItems: MAX_TRANSFORMATIONS }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_COALESCED_PARTS },
      ),
    },
    {
      additionalProperties: false,
      description:
        "coalesce without a shuffle (Spark's CoalescedRDD): parent partitions, each its source and transformations, one after another",
    },
  ),
]);
export type PartitionSource = Static<typeof PartitionSource>;

/** What a task computes from its partition's elements. */
export const PartitionAction = Type.Union([
  Type.Object({ kind: Type.Literal('collect') }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('count') }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('take'), n: TaskCounter }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('reduce'), fn: FunctionSpec }, { additionalProperties: false }),
  Type.Object(
    { kind: Type.Literal('aggregate'), zero: Type.Unknown(), seqOp: FunctionSpec },
    { additionalProperties: false, description: 'fold and sum are aggregates too' },
  ),
  Type.Object({ kind: Type.Literal('foreach'), fn: FunctionSpec }, { additionalProperties: false }),
  Type.Object(
    {
      kind: Type.Literal('shuffleWrite'),
      shuffleId: TaskCounter,
      numPartitions: Type.Integer({ minimum: 1, maximum: MAX_SHUFFLE_PARTITIONS }),
      partitioner: PartitionerSpec,
      aggregator: Type.Optional(Aggregator),
      mapSideCombine: Type.Optional(Type.Boolean()),
    },
    {
      additionalProperties: false,
      description:
        "A ShuffleMapStage's task: write the records by reducer to the executor's shuffle files; the result is a MapStatus",
    },
  ),
]);
export type PartitionAction = Static<typeof PartitionAction>;

export const TaskDescription = Type.Object(
  {
    taskId: TaskCounter,
    jobId: TaskCounter,
    stageId: TaskCounter,
    partition: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
    attempt: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
    source: PartitionSource,
    transformations: Type.Array(Transformation, { maxItems: MAX_TRANSFORMATIONS }),
    action: PartitionAction,
    files: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SHIPPED_FILES,
        description:
          'How many added files (AppConfig.files, then AddFiles) the task needs: it waits for them',
      }),
    ),
    resources: Type.Optional(ResourceAddresses),
  },
  { additionalProperties: false },
);
export type TaskDescription = Static<typeof TaskDescription>;

export const TaskError = Type.Object(
  {
    name: Type.String({ maxLength: MAX_NAME_LENGTH }),
    message: Type.String({ maxLength: MAX_MESSAGE_LENGTH }),
    stack: Type.Optional(Type.String({ maxLength: MAX_STACK_LENGTH })),
    fetchFailed: Type.Optional(
      Type.Object(
        {
          shuffleId: TaskCounter,
          mapId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
          executorId: Type.String({ minLength: 1, maxLength: 100 }),
        },
        {
          additionalProperties: false,
          description:
            "A reducer could not read (or verify) this map output (Spark's FetchFailed): the driver recomputes it",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TaskError = Static<typeof TaskError>;

/** A task's error cut to the bounds of TaskError (a task may throw a message of any size). */
export function boundedTaskError(e: TaskError): TaskError {
  const out: TaskError = {
    name: truncateMessage(e.name, MAX_NAME_LENGTH),
    message: truncateMessage(e.message, MAX_MESSAGE_LENGTH),
  };
  if (e.stack !== undefined) out.stack = truncateMessage(e.stack, MAX_STACK_LENGTH);
  if (e.fetchFailed !== undefined) out.fetchFailed = e.fetchFailed;
  return out;
}

/**
 * What a task measured of its shuffle I/O (Spark's TaskMetrics: ShuffleWriteMetrics,
 * ShuffleReadMetrics, memory/disk bytes spilled), sent with its end. Every group and field is
 * optional: a task reports what it did, and an executor in another language may report nothing.
 */
export const TaskMetrics = Type.Object(
  {
    shuffleWrite: Type.Optional(
      Type.Object(
        {
          bytesWritten: TaskCounter,
          recordsWritten: TaskCounter,
        },
        {
          additionalProperties: false,
          description: "A map task's output: data file bytes, records",
        },
      ),
    ),
    shuffleRead: Type.Optional(
      Type.Object(
        {
          localBytesRead: TaskCounter,
          remoteBytesRead: TaskCounter,
          remoteBytesReadToDisk: TaskCounter,
          recordsRead: TaskCounter,
          fetchWaitTimeMs: Type.Number({ minimum: 0, maximum: MAX_COUNTER }),
        },
        {
          additionalProperties: false,
          description:
            "A reduce task's fetch: bytes of blocks this executor wrote (local) and of others' (remote), those fetched to a file rather than memory, records parsed, and the time the task waited for its blocks",
        },
      ),
    ),
    spillCount: Type.Optional(TaskCounter),
    memoryBytesSpilled: Type.Optional(TaskCounter),
    diskBytesSpilled: Type.Optional(TaskCounter),
  },
  { additionalProperties: false },
);
export type TaskMetrics = Static<typeof TaskMetrics>;
