import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ShippedFile } from '../protocol/files.js';
import { shippedPathUnder } from './shippedPath.js';

/** Files hashed at once: enough to keep a disk busy, few enough not to run out of descriptors. */
const PARALLEL = 16;

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What travels for the files at `paths` (relative, `/`-separated) under `root`. */
export async function describeFiles(
  root: string,
  paths: readonly string[],
): Promise<ShippedFile[]> {
  const out: ShippedFile[] = new Array(paths.length);
  let next = 0;
  const work = async () => {
    for (let i = next++; i < paths.length; i = next++) {
      const path = paths[i] as string;
      const abs = shippedPathUnder(root, path);
      const s = await stat(abs);
      const file: ShippedFile = { path, sha256: await sha256File(abs), size: s.size };
      if (s.mode & 0o111) file.executable = true;
      out[i] = file;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, paths.length) }, work));
  return out;
}
