import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { bytesOf } from '../../protocol/base64.js';
import { FetchShuffleBlock, SHUFFLE_ENDPOINT } from '../../protocol/shuffle.js';
import type { PartitionSource, ShuffleBlockRef } from '../../protocol/task.js';
import type { RpcEnv } from '../../rpc/index.js';

/**
 * Bytes per FetchShuffleBlock ask, and map outputs fetched at once by one reduce task (Spark's
 * spark.reducer.maxReqsInFlight, in spirit). A chunk in flight costs about four times its size in
 * the executor's main thread (the buffer, its base64, the frame, the decoded copy), on the fetching
 * side and on the serving side, and cores + 1 reduce tasks fetch at once: 1 MiB × 8 put an
 * executor's main thread at up to 80 MiB of heap and 88 MiB of external memory in the
 * no-map-side-combine WordCount (bench/wordcount.bench.ts), and its peak RSS grew with the input;
 * 512 KiB × 4 keeps it at 210 MiB at 256 MiB of input as at 64, for about 4% of that run's time.
 */
const CHUNK = 512 * 1024;
const PARALLEL = 4;

export interface FetchOptions {
  timeoutMs?: number;
  /** The blocks' application: a worker's shuffle service running open needs it to be told. */
  appId?: string;
}

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
  options: FetchOptions = {},
): Promise<Uint8Array[]> {
  const out: Uint8Array[] = new Array(blocks.length);
  await eachBlock(blocks, async (b, i) => {
    const data = Buffer.alloc(b.size);
    await fetchOne(env, shuffleId, reduceId, b, (chunk, at) => void chunk.copy(data, at), options);
    out[i] = data;
  });
  return out;
}

/**
 * The same, into one file: the blocks one after another in their order, each written at its
 * place as its chunks come (so at most PARALLEL chunks are in memory). A reader parses the file
 * as one stream: every block ends with a newline.
 */
export async function fetchShuffleBlocksToFile(
  env: RpcEnv,
  shuffleId: number,
  reduceId: number,
  blocks: readonly ShuffleBlockRef[],
  path: string,
  options: FetchOptions = {},
): Promise<number> {
  const starts: number[] = [];
  let total = 0;
  for (const b of blocks) {
    starts.push(total);
    total += b.size;
  }
  const fh = await open(path, 'w');
  try {
    await eachBlock(blocks, async (b, i) => {
      const base = starts[i] as number;
      const writes: Promise<unknown>[] = [];
      await fetchOne(
        env,
        shuffleId,
        reduceId,
        b,
        (chunk, at) => void writes.push(fh.write(chunk, 0, chunk.length, base + at)),
        options,
      );
      await Promise.all(writes);
    });
  } finally {
    await fh.close();
  }
  return total;
}

async function eachBlock(
  blocks: readonly ShuffleBlockRef[],
  fetch: (b: ShuffleBlockRef, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const work = async () => {
    for (let i = next++; i < blocks.length; i = next++)
      await fetch(blocks[i] as ShuffleBlockRef, i);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, blocks.length) }, work));
}

async function fetchOne(
  env: RpcEnv,
  shuffleId: number,
  reduceId: number,
  b: ShuffleBlockRef,
  onChunk: (chunk: Buffer, offset: number) => void,
  { timeoutMs, appId }: FetchOptions,
): Promise<void> {
  const name = `shuffle_${shuffleId}_${b.mapId}_${reduceId} from executor ${b.executorId} (${b.location})`;
  if (b.size === 0) return;
  let offset = 0;
  let crc = 0;
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
      onChunk(chunk, offset);
      crc = crc32(chunk, crc);
      offset += chunk.length;
    }
  } catch (err) {
    throw new FetchFailedError(`Failed to fetch ${name}: ${(err as Error).message}`, shuffleId, b);
  }
  const got = crc >>> 0;
  if (got !== b.crc32) {
    throw new FetchFailedError(
      `Block ${name} is corrupt: its CRC-32 is ${got}, ${b.crc32} expected`,
      shuffleId,
      b,
    );
  }
}

/**
 * Spark's ShuffleBlockFetcherIterator line: how many non-empty blocks a reducer gets and from
 * where, so a log shows whether a shuffle crossed executors (or hosts). Local blocks are those
 * this executor wrote, as in its metrics' localBytesRead.
 */
export function fetchPlanLine(
  src: { shuffleId: number; reduceId: number; blocks: readonly ShuffleBlockRef[] },
  ownExecutorId: string,
): string {
  const nonEmpty = src.blocks.filter((b) => b.size > 0);
  const bytes = nonEmpty.reduce((n, b) => n + b.size, 0);
  const remote = nonEmpty.filter((b) => b.executorId !== ownExecutorId);
  const sources = [...new Set(remote.map((b) => b.location))];
  return `Getting ${nonEmpty.length} (${bytes} B) non-empty blocks of shuffle ${src.shuffleId} reducer ${src.reduceId} including ${nonEmpty.length - remote.length} local and ${remote.length} remote blocks${sources.length > 0 ? ` from ${sources.sort().join(', ')}` : ''}`;
}

type ShuffleSource = Extract<PartitionSource, { kind: 'shuffle' }>;

/** The shuffle reads of a task's source: itself, or a coalesced partition's shuffle parts in order. */
export function shuffleReadsOf(source: PartitionSource): ShuffleSource[] {
  if (source.kind === 'shuffle') return [source];
  if (source.kind !== 'coalesced') return [];
  const out: ShuffleSource[] = [];
  for (const p of source.parts) if (p.source.kind === 'shuffle') out.push(p.source);
  return out;
}
