import type { MessageOf } from '../protocol/registry.js';
import { FetchShuffleBlock, ShuffleBlockChunk } from '../protocol/shuffle.js';
import { RpcEndpoint, RpcError, type RpcSenderContext } from '../rpc/index.js';
import { readShuffleChunk } from './blockFiles.js';

/**
 * Where the map outputs a FetchShuffleBlock may read lie, and what to call them in errors; or
 * an RpcError saying why there are none for this sender (thrown).
 */
export type BlockDirResolver = (
  msg: MessageOf<typeof FetchShuffleBlock>,
  sender: RpcSenderContext,
) => { dir: string; where: string } | Promise<{ dir: string; where: string }>;

/**
 * Serves map outputs to reducers a chunk per ask (Spark's NettyBlockRpcServer for shuffle
 * blocks). One server, two homes: an executor's own shuffle RpcEnv, where every block is its own
 * (app/executor), and the worker's shuffle service, where the block's application is the one the
 * connection proved (worker/shuffleService.ts). Who may ask is the resolver's and its RpcEnv's
 * business; only files named as map outputs under the dir it gives can be read, whatever a peer asks.
 */
export class ShuffleBlockServer extends RpcEndpoint {
  constructor(private readonly resolve: BlockDirResolver) {
    super();
    this.on(FetchShuffleBlock, async (msg, ctx) => {
      const { dir, where } = await this.resolve(msg, ctx);
      const { data, size } = await readShuffleChunk(dir, msg, where);
      return ShuffleBlockChunk({ data: data.toString('base64'), size });
    });
  }

  /**
   * A block not found or a fetch refused is the asker's news (its RpcError says why), not the
   * server's: at debug, so that a peer asking for nonsense in a loop cannot fill the log.
   */
  override onError(err: Error): void {
    if (err instanceof RpcError) this.log.debug(`Refused a fetch: ${err.message}`);
    else super.onError(err);
  }
}
