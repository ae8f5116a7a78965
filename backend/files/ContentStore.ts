import { createHash, type Hash } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ShippedFile } from '../protocol/files.js';

/** Uploads one peer may have under way at once. */
const MAX_UPLOADS_PER_PEER = 16;

interface Upload {
  path: string;
  received: number;
  hash: Hash;
}

/**
 * Files kept by content (SHA-256) in a folder, as uploaded in order in chunks by peers: the
 * master's copy of cluster-mode applications. An upload is a partial file of its own until its
 * last chunk, which is checked against the hash before it is renamed into place, so a file that
 * is there is whole and right; uploads whose peer went away are dropped.
 */
export class ContentStore {
  private readonly uploads = new Map<string, Upload>();

  constructor(
    readonly dir: string,
    /** The largest file, and the most bytes one RequestMissingFiles may announce. */
    readonly maxBytes: number,
  ) {}

  path(sha256: string): string {
    return join(this.dir, sha256);
  }

  async has(sha256: string): Promise<boolean> {
    try {
      return (await stat(this.path(sha256))).isFile();
    } catch {
      return false;
    }
  }

  /** The SHA-256s of `files` not here yet, each once; throws if they are more than maxBytes. */
  async missing(files: readonly ShippedFile[]): Promise<string[]> {
    const sizes = new Map(files.map((f) => [f.sha256, f.size]));
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    if (total > this.maxBytes) {
      throw new Error(
        `The application's files are ${total} bytes, more than this master keeps for one submission (wick.master.upload.maxSize = ${this.maxBytes} bytes): raise it on the masters, or ship less (large data belongs on shared storage, read with textFile)`,
      );
    }
    const out: string[] = [];
    for (const sha of sizes.keys()) if (!(await this.has(sha))) out.push(sha);
    return out;
  }

  /** Adds a chunk of `peer`'s upload; true once the file is complete and kept. */
  async write(
    peer: string,
    chunk: { sha256: string; size: number; offset: number; data: Buffer },
  ): Promise<{ received: number; complete: boolean }> {
    const { sha256, size, offset, data } = chunk;
    if (size > this.maxBytes) {
      throw new Error(
        `File ${sha256} is ${size} bytes, more than wick.master.upload.maxSize (${this.maxBytes} bytes)`,
      );
    }
    const key = `${peer}\0${sha256}`;
    let up = this.uploads.get(key);
    if (!up) {
      if (offset !== 0) throw new Error(`No upload of ${sha256} under way: start it at offset 0`);
      if (this.uploadsOf(peer) >= MAX_UPLOADS_PER_PEER) {
        throw new Error(`At most ${MAX_UPLOADS_PER_PEER} uploads at a time per connection`);
      }
      await mkdir(this.dir, { recursive: true });
      up = {
        path: join(
          this.dir,
          `.upload-${sha256}-${createHash('sha256').update(peer).digest('hex').slice(0, 12)}`,
        ),
        received: 0,
        hash: createHash('sha256'),
      };
      await rm(up.path, { force: true });
      this.uploads.set(key, up);
    }
    if (offset !== up.received) {
      throw new Error(`Upload of ${sha256} expected offset ${up.received}, got ${offset}`);
    }
    if (up.received + data.length > size) {
      this.drop(key, up);
      throw new Error(`Upload of ${sha256} has more than its ${size} bytes`);
    }
    const file = await open(up.path, 'a');
    try {
      await file.write(data);
    } finally {
      await file.close();
    }
    up.hash.update(data);
    up.received += data.length;
    if (up.received < size) return { received: up.received, complete: false };
    this.uploads.delete(key);
    const got = up.hash.digest('hex');
    if (got !== sha256) {
      await rm(up.path, { force: true });
      throw new Error(`Uploaded file does not match its SHA-256: expected ${sha256}, got ${got}`);
    }
    await rename(up.path, this.path(sha256));
    return { received: up.received, complete: true };
  }

  /** Drops the uploads under way of a peer that went away. */
  peerGone(peer: string): void {
    for (const [key, up] of this.uploads) if (key.startsWith(`${peer}\0`)) this.drop(key, up);
  }

  /**
   * Removes the files no one needs: not in `keep` and older than `graceMs` (a submit uploads its
   * files before it asks for the driver, which only then keeps them).
   */
  async removeAllBut(
    keep: ReadonlySet<string>,
    graceMs: number,
    now = Date.now(),
  ): Promise<number> {
    let removed = 0;
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      if (!/^[0-9a-f]{64}$/.test(name) || keep.has(name)) continue;
      try {
        if (now - (await stat(this.path(name))).mtimeMs < graceMs) continue;
        await rm(this.path(name), { force: true });
        removed++;
      } catch {
        // Gone meanwhile.
      }
    }
    return removed;
  }

  private uploadsOf(peer: string): number {
    let n = 0;
    for (const key of this.uploads.keys()) if (key.startsWith(`${peer}\0`)) n++;
    return n;
  }

  private drop(key: string, up: Upload): void {
    this.uploads.delete(key);
    void rm(up.path, { force: true });
  }
}
