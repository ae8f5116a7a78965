import { crc32 } from 'node:zlib';
import { bytesOf } from '../../protocol/base64.js';
import type { ShuffleBlockRef } from '../../protocol/executor.js';
import { FetchShuffleBlock, SHUFFLE_ENDPOINT } from '../../protocol/shuffle.js';
import type { RpcEnv } from '../../rpc/index.js';

/** Bytes per FetchShuffleBlock ask. */
const CHUNK = 1024 * 1024;
/** Map outputs fetched at once (Spark's spark.reducer.maxReqsInFlight, in spirit). */
const PARALLEL = 8;

/** A block could not be read or did not match its MapStatus: the driver recomputes its map output. */
export class FetchFailedError extends Error {
  constructor(
    message: string,
    readonly shuffleId: number,
    readonly block: ShuffleBlockRef,
  ) {
    super(message);
    this.name = 'FetchFailed';
  }
}

/**
 * Fetches a reducer's block of each map output (Spark's ShuffleBlockFetcherIterator, before the
 * task rather than while it runs: a task thread has no RpcEnv), chunk by chunk, each chunk asked
 * once the last has come, and checks each block's size and CRC-32 against its MapStatus. Empty
 * blocks are not asked for.
 */
export async function fetchShuffleBlocks(
  env: RpcEnv,
  shuffleId: number,
  reduceId: number,
  blocks: readonly ShuffleBlockRef[],
  timeoutMs?: number,
  /** The blocks' application: a worker's shuffle service running open needs it to be told. */
  appId?: string,
): Promise<Uint8Array[]> {
  const out: Uint8Array[] = new Array(blocks.length);
  let next = 0;
  const work = async () => {
    for (let i = next++; i < blocks.length; i = next++) {
      out[i] = await fetchOne(
        env,
        shuffleId,
        reduceId,
        blocks[i] as ShuffleBlockRef,
        timeoutMs,
        appId,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, blocks.length) }, work));
  return out;
}

async function fetchOne(
  env: RpcEnv,
  shuffleId: number,
  reduceId: number,
  b: ShuffleBlockRef,
  timeoutMs?: number,
  appId?: string,
): Promise<Uint8Array> {
  const name = `shuffle_${shuffleId}_${b.mapId}_${reduceId} from executor ${b.executorId} (${b.location})`;
  if (b.size === 0) return new Uint8Array(0);
  const data = Buffer.alloc(b.size);
  let offset = 0;
  try {
    const ref = env.endpointRef({ address: b.location, name: SHUFFLE_ENDPOINT });
    while (offset < b.size) {
      const reply = await ref.ask(
        FetchShuffleBlock({
          shuffleId,
          mapId: b.mapId,
          reduceId,
          executorId: b.executorId,
          ...(appId ? { appId } : {}),
          offset,
          length: Math.min(CHUNK, b.size - offset),
        }),
        timeoutMs ? { timeout: timeoutMs } : {},
      );
      const chunk = bytesOf(reply, 'data');
      if (reply.size !== b.size || chunk.length === 0 || offset + chunk.length > b.size) {
        throw new Error(`its size is ${reply.size} bytes on the server, ${b.size} expected`);
      }
      chunk.copy(data, offset);
      offset += chunk.length;
    }
  } catch (err) {
    throw new FetchFailedError(`Failed to fetch ${name}: ${(err as Error).message}`, shuffleId, b);
  }
  const got = crc32(data) >>> 0;
  if (got !== b.crc32) {
    throw new FetchFailedError(
      `Block ${name} is corrupt: its CRC-32 is ${got}, ${b.crc32} expected`,
      shuffleId,
      b,
    );
  }
  return data;
}
