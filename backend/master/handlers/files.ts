import { bytesOf } from '../../protocol/base64.js';
import {
  FileChunkStored,
  MissingFiles,
  RequestMissingFiles,
  UploadFileChunk,
} from '../../protocol/files.js';
import type { HandlerContext, HandlerRegistry } from './context.js';

/**
 * The files of cluster-mode applications: a submit uploads them (to every master it names, so a
 * standby that takes over has them too: ZooKeeper holds the descriptions, never the bytes), and a
 * worker fetches them from its master's file server when it launches the driver, or relaunches it
 * on another worker, or after the master recovered. A standby accepts uploads: that is the point.
 * What no driver needs any more is removed by operations/files.ts.
 */

export function fileHandlers(m: HandlerContext, on: HandlerRegistry): void {
  on(RequestMissingFiles, async (msg) => {
    const store = m.files;
    if (!store) throw new Error('This master keeps no files (it was started without a files dir)');
    return MissingFiles({ sha256s: await store.missing(msg.files) });
  });
  on(UploadFileChunk, async (msg, ctx) => {
    const store = m.files;
    if (!store) throw new Error('This master keeps no files (it was started without a files dir)');
    const r = await store.write(ctx.senderAddress, { ...msg, data: bytesOf(msg, 'data') });
    return FileChunkStored(r);
  });
}
