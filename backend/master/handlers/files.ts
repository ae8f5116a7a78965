import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { bytesOf } from '../../protocol/base64.js';
import {
  FileChunkStored,
  MissingFiles,
  RequestMissingFiles,
  ShippedAppManifest,
  UploadFileChunk,
} from '../../protocol/files.js';
import { getLogger } from '../../util/log.js';
import type { HandlerRegistry, Master } from '../Master.js';

/**
 * The files of cluster-mode applications: a submit uploads them (to every master it names, so a
 * standby that takes over has them too: ZooKeeper holds the descriptions, never the bytes), and a
 * worker fetches them from its master's file server when it launches the driver, or relaunches it
 * on another worker, or after the master recovered. A standby accepts uploads: that is the point.
 */

const log = getLogger('Master');

/** Files uploaded but not yet named by a driver are kept this long (the submit asks next). */
const UPLOAD_GRACE_MS = 10 * 60_000;

export function fileHandlers(m: Master, on: HandlerRegistry): void {
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

/**
 * Removes the kept files that no driver that may still run needs (after one ended): each driver
 * names its manifest, and the manifest its files.
 */
export async function removeUnusedFiles(m: Master): Promise<void> {
  const store = m.files;
  if (!store) return;
  const keep = new Set<string>();
  for (const d of m.cluster.activeDrivers()) {
    const ref = d.desc.shipped;
    if (!ref) continue;
    keep.add(ref.sha256);
    try {
      const manifest: unknown = JSON.parse(await readFile(store.path(ref.sha256), 'utf8'));
      if (!Value.Check(ShippedAppManifest, manifest)) continue;
      for (const f of [...manifest.code.files, ...manifest.files]) keep.add(f.sha256);
    } catch {
      // Not here (uploaded to another master only): nothing of it to keep.
    }
  }
  const removed = await store.removeAllBut(keep, UPLOAD_GRACE_MS);
  if (removed > 0) log.info(`Removed ${removed} files no driver needs any more`);
}
