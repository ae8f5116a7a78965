import { type Static, Type } from '@sinclair/typebox';
import { MAX_ID_LENGTH, MAX_INT32 } from './bounds.js';
import { boundary, defineMessage } from './registry.js';
import { MAX_SHUFFLE_PARTITIONS } from './task.js';

/**
 * Shuffle blocks to reducers (Spark's BlockTransferService): a reducer reads its block of a map
 * output in chunks, asking for the next when it has the last (back-pressure without a stream
 * protocol), and checks it against the CRC-32 the map task reported to the driver (MapStatus).
 * One message, two servers: the executor's own shuffle RpcEnv, which lets in only its
 * application's key, or, with wick.shuffle.service.enabled, its worker's shuffle service (Spark's
 * ExternalShuffleService), which lets in any application's key and serves each connection the
 * blocks of the application whose key it proved, and nothing else.
 */

/** The largest chunk one FetchShuffleBlock may ask for (its base64 is a third larger). */
export const MAX_SHUFFLE_CHUNK = 4 * 1024 * 1024;

/** The endpoint name of an executor's shuffle block server. */
export const SHUFFLE_ENDPOINT = 'ShuffleBlocks';

/**
 * What a ShuffleMapStage's task returns (Spark's MapStatus): where its output is, and its sizes.
 * It travels as StatusUpdate.result, a field open to any action's result, so it has a schema of
 * its own (docs/protocol/structures/MapStatus.schema.json), which the driver checks it against.
 */
export const MapStatus = Type.Object(
  {
    location: Type.String({
      minLength: 1,
      maxLength: 300,
      description:
        "`host:port` of the RpcEnv whose `ShuffleBlocks` endpoint serves the blocks: the executor's own shuffle RpcEnv, or its worker's shuffle service (then `shuffleService` is true). Reducers fetch from it with FetchShuffleBlock",
    }),
    executorId: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'The executor that ran the map task and wrote the files (its `RegisterExecutor.executorId`). Reducers send it as `FetchShuffleBlock.executorId`; the driver drops the output when that executor is lost (unless `shuffleService`)',
    }),
    sizes: Type.Array(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), {
      maxItems: MAX_SHUFFLE_PARTITIONS,
      description:
        "Bytes of each reducer's block, one entry per reducer (`numPartitions` of the task's `shuffleWrite`, in reducer order; the driver refuses another count). 0 is an empty block, which no reducer fetches",
    }),
    crc32s: Type.Array(Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1 }), {
      maxItems: MAX_SHUFFLE_PARTITIONS,
      description:
        "CRC-32 of each reducer's block, one entry per reducer as `sizes`: zlib's CRC-32 (ISO-HDLC, as Python's `zlib.crc32`) of the block's bytes, unsigned; 0 for an empty block. A reducer checks what it fetched against it",
    }),
    records: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'How many records the task wrote, over all its blocks (one line of a block each; after a map-side combine, one per key and spill). For information only: the driver uses it for nothing, and may be sent without it',
      }),
    ),
    shuffleService: Type.Optional(
      Type.Boolean({
        description:
          "`location` is its worker's shuffle service: the output outlives its executor, and is lost with its worker",
      }),
    ),
  },
  { additionalProperties: false },
);
export type MapStatus = Static<typeof MapStatus>;

const e2e = boundary('Executor → Executor or Worker (shuffle)', 'executor', ['executor', 'worker']);

const BlockId = {
  shuffleId: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  mapId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
  reduceId: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
};

export const FetchShuffleBlock = defineMessage(
  e2e,
  'FetchShuffleBlock',
  "Read up to `length` bytes at `offset` of map output `mapId`'s block for reducer `reduceId` of shuffle `shuffleId`, written by executor `executorId`. One the server does not have is refused with ShuffleBlockNotFound (-32021).",
  {
    ...BlockId,
    executorId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          "The executor that wrote the map output (its MapStatus.executorId); a worker's shuffle service needs it, an executor refuses another's",
      }),
    ),
    appId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_ID_LENGTH,
        description:
          "The map output's application, for a worker's shuffle service with authentication off; with it on the connection's key decides, and another id is refused",
      }),
    ),
    offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    length: Type.Integer({ minimum: 1, maximum: MAX_SHUFFLE_CHUNK }),
  },
  { reply: () => ShuffleBlockChunk },
);

export const ShuffleBlockChunk = defineMessage(
  e2e,
  'ShuffleBlockChunk',
  'The answer to FetchShuffleBlock: the bytes (fewer than asked at the end of the block), base64, and the whole block size.',
  {
    data: Type.String({ contentEncoding: 'base64', maxLength: (MAX_SHUFFLE_CHUNK / 3) * 4 + 4 }),
    size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  },
);
