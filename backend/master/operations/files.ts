import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { ShippedAppManifest } from '../../protocol/files.js';
import { getLogger } from '../../util/log.js';
import type { OperationsContext } from './context.js';

const log = getLogger('Master');

/** Files uploaded but not yet named by a driver are kept this long (the submit asks next). */
const UPLOAD_GRACE_MS = 10 * 60_000;

/**
 * Removes the kept files that no driver that may still run needs (after one ended): each driver
 * names its manifest, and the manifest its files.
 */
export async function removeUnusedFiles(m: OperationsContext): Promise<void> {
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
