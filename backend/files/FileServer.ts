import { open } from 'node:fs/promises';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import { FetchFileChunk, FileChunk } from '../protocol/files.js';
import { RpcEndpoint, type RpcSenderContext, refuse } from '../rpc/index.js';
import type { ContentStore } from './ContentStore.js';

/**
 * Serves files by content (Spark's NettyStreamManager in the driver's RpcEnv): what it offers is
 * a SHA-256 → local path table, filled by whoever owns the files (the driver: its application's
 * code and added files), and a ContentStore's files (the master: cluster-mode uploads). Nothing
 * else on the disk can be read through it, whatever a peer asks.
 */
export class FileServer extends RpcEndpoint {
  private readonly offered = new Map<string, string>();

  /**
   * `store`: files offered beside those offered one by one (the master's uploads). `mayRead`:
   * who may read them (the master's: holders of the cluster secret, its workers).
   */
  constructor(
    private readonly store?: ContentStore,
    mayRead: (sender: RpcSenderContext) => boolean = () => true,
  ) {
    super();
    this.on(FetchFileChunk, async (msg, ctx) => {
      if (!mayRead(ctx)) {
        throw refuse('FetchFileChunk', "this server's files are for the cluster's own processes");
      }
      const path =
        this.offered.get(msg.sha256) ??
        ((await this.store?.has(msg.sha256)) ? this.store?.path(msg.sha256) : undefined);
      if (path === undefined) {
        throw new RpcError(
          RpcErrorCode.FileNotOffered,
          `No file with SHA-256 ${msg.sha256} is offered here`,
        );
      }
      const file = await open(path, 'r');
      try {
        const { size } = await file.stat();
        const length = Math.max(0, Math.min(msg.length, size - msg.offset));
        const data = Buffer.alloc(length);
        const { bytesRead } = await file.read(data, 0, length, msg.offset);
        return FileChunk({ data: data.subarray(0, bytesRead).toString('base64'), size });
      } finally {
        await file.close();
      }
    });
  }

  /** Offers the file at `path` under its SHA-256 (the caller has hashed it). */
  offer(sha256: string, path: string): void {
    this.offered.set(sha256, path);
  }
}
