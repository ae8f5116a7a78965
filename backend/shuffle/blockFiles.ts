import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';

/**
 * A map output on disk (Spark's IndexShuffleBlockResolver): `shuffle_<shuffleId>_<mapId>_0.data`
 * holds the reducers' blocks one after another, `….index` their offsets, numPartitions + 1
 * unsigned 64-bit big-endian integers. A block is newline-terminated JSON records (docs/protocol.md).
 * The names are made of integers alone (the protocol bounds them), so no id can reach outside
 * `dir`: this is what lets an executor's server and the worker's shuffle service read the same
 * files for any peer.
 */
export function shuffleFiles(
  dir: string,
  shuffleId: number,
  mapId: number,
): { data: string; index: string } {
  if (![shuffleId, mapId].every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new Error(`Shuffle ids must be non-negative integers, got ${shuffleId} and ${mapId}`);
  }
  const base = join(dir, `shuffle_${shuffleId}_${mapId}_0`);
  return { data: `${base}.data`, index: `${base}.index` };
}

export interface ChunkRequest {
  shuffleId: number;
  mapId: number;
  reduceId: number;
  offset: number;
  length: number;
}

/**
 * Up to `length` bytes at `offset` of reducer `reduceId`'s block of a map output in `dir`, and
 * the block's whole size. A block that is not there is ShuffleBlockNotFound, naming `where`.
 */
export async function readShuffleChunk(
  dir: string,
  r: ChunkRequest,
  where: string,
): Promise<{ data: Buffer; size: number }> {
  const { start, end } = await blockRange(dir, r, where);
  // A damaged index (end before start) reads as an empty block: the reducer's CRC check says so.
  const size = Math.max(0, end - start);
  const length = Math.max(0, Math.min(r.length, size - r.offset));
  const data = Buffer.alloc(length);
  const f = await openFile(shuffleFiles(dir, r.shuffleId, r.mapId).data).catch(() => {
    throw notFound(r, where);
  });
  try {
    const { bytesRead } = await f.read(data, 0, length, start + r.offset);
    return { data: data.subarray(0, bytesRead), size };
  } finally {
    await f.close();
  }
}

/**
 * A map output file, opened for reading only if it is one: not through a symbolic link, which the
 * application's own code (its tasks run in the executor, as the worker's user) could plant in
 * its folder to make a worker's shuffle service read some other file for it.
 */
async function openFile(path: string) {
  const f = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  if (!(await f.stat()).isFile()) {
    await f.close();
    throw new Error(`${path} is not a regular file`);
  }
  return f;
}

function notFound(r: ChunkRequest, where: string): RpcError {
  return new RpcError(
    RpcErrorCode.ShuffleBlockNotFound,
    `No block shuffle_${r.shuffleId}_${r.mapId}_${r.reduceId} here: ${where} has no such map output`,
  );
}

/** Where reducer `reduceId`'s block lies in the data file, from the index. */
async function blockRange(
  dir: string,
  r: ChunkRequest,
  where: string,
): Promise<{ start: number; end: number }> {
  let ix: Awaited<ReturnType<typeof open>>;
  try {
    ix = await openFile(shuffleFiles(dir, r.shuffleId, r.mapId).index);
  } catch {
    throw notFound(r, where);
  }
  try {
    const b = Buffer.alloc(16);
    const { bytesRead } = await ix.read(b, 0, 16, 8 * r.reduceId);
    if (bytesRead < 16) throw notFound(r, where);
    const start = Number(b.readBigUInt64BE(0));
    const end = Number(b.readBigUInt64BE(8));
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) {
      throw new RpcError(
        RpcErrorCode.ShuffleBlockNotFound,
        `The index of map output ${r.mapId} of shuffle ${r.shuffleId} in ${where} is damaged: block ${r.reduceId} spans ${start}…${end}`,
      );
    }
    return { start, end };
  } finally {
    await ix.close();
  }
}
