import { conf } from './WickConf.js';

/**
 * An application's shuffle memory (Spark's spark.shuffle.spill.*, spark.reducer.*): read by its
 * executors from the AppConfig the driver sends, so they are application settings.
 */
export const ShuffleConf = {
  spillMemoryThreshold: conf.sizeBytes(
    'wick.shuffle.spill.memoryThreshold',
    '32m',
    "The estimated size a task's in-memory shuffle buffer may reach before it is spilled to a file in the application's local dir (Spark's spark.shuffle.spill.initialMemoryThreshold, here fixed rather than grown): a map task's records by reducer (combined first when it combines map-side), a reduce task's per-key aggregation and sortByKey's records. Estimated as serialized JSON bytes plus a per-record overhead.",
  ),
  maxSizeFetchToMem: conf.sizeBytes(
    'wick.reducer.maxSizeFetchToMem',
    '32m',
    "The most bytes of fetched shuffle blocks an executor holds in memory at once, over all its reduce tasks (fetching, queued or running): a reduce task whose blocks would take it past this has them fetched to a file in the application's local dir instead, which the task reads from in chunks (Spark's spark.network.maxRemoteBlockSizeFetchToMem, here over an executor's tasks: a task's blocks are all fetched before it runs).",
  ),
};
