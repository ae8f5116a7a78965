import { open } from 'node:fs/promises';
import { RpcError, RpcErrorCode } from '../../protocol/errors.js';
import { FetchShuffleBlock, ShuffleBlockChunk } from '../../protocol/shuffle.js';
import { RpcEndpoint } from '../../rpc/index.js';
import { shuffleFiles } from '../shuffle/blocks.js';

/**
 * Serves this executor's map outputs to reducers (Spark's NettyBlockRpcServer for shuffle
 * blocks), a chunk per ask, from the files its map tasks wrote under `dir`. Only blocks of files
 * named as map outputs under `dir` can be read, whatever a peer asks. Its RpcEnv lets in only the
 * application's key (CoarseGrainedExecutorBackend).
 */
export class ShuffleBlockServer extends RpcEndpoint {
  constructor(private readonly dir: string) {
    super();
    this.on(FetchShuffleBlock, async (msg) => {
      const { start, end } = await this.blockRange(msg.shuffleId, msg.mapId, msg.reduceId);
      const size = end - start;
      const length = Math.max(0, Math.min(msg.length, size - msg.offset));
      const data = Buffer.alloc(length);
      const f = await open(shuffleFiles(this.dir, msg.shuffleId, msg.mapId).data, 'r');
      try {
        const { bytesRead } = await f.read(data, 0, length, start + msg.offset);
        return ShuffleBlockChunk({ data: data.subarray(0, bytesRead).toString('base64'), size });
      } finally {
        await f.close();
      }
    });
  }

  /** Where reducer `reduceId`'s block lies in the data file, from the index. */
  private async blockRange(
    shuffleId: number,
    mapId: number,
    reduceId: number,
  ): Promise<{ start: number; end: number }> {
    const notFound = () =>
      new RpcError(
        RpcErrorCode.ShuffleBlockNotFound,
        `No block shuffle_${shuffleId}_${mapId}_${reduceId} here: this executor has no such map output`,
      );
    let ix: Awaited<ReturnType<typeof open>>;
    try {
      ix = await open(shuffleFiles(this.dir, shuffleId, mapId).index, 'r');
    } catch {
      throw notFound();
    }
    try {
      const b = Buffer.alloc(16);
      const { bytesRead } = await ix.read(b, 0, 16, 8 * reduceId);
      if (bytesRead < 16) throw notFound();
      return { start: Number(b.readBigUInt64BE(0)), end: Number(b.readBigUInt64BE(8)) };
    } finally {
      await ix.close();
    }
  }
}
