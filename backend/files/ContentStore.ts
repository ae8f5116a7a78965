import { createHash, type Hash } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ShippedFile } from '../protocol/files.js';

/** Uploads one peer may have under way at once. */
const MAX_UPLOADS_PER_PEER = 16;

interface Upload {
  path: string;
  size: number;
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
  /** Bytes of the files kept, learnt from the folder at first use (a restart keeps them). */
  private stored: Promise<number> | undefined;

  constructor(
    readonly dir: string,
    /** The largest file, and the most bytes one RequestMissingFiles may announce. */
    readonly maxBytes: number,
    /**
     * The most bytes kept in all, files and uploads under way (wick.master.upload.maxTotalSize):
     * without it, many submissions each under maxBytes would fill the master's disk.
     */
    readonly maxTotalBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Bytes kept now: the files, and the full size of each upload under way. */
  async usedBytes(): Promise<number> {
    let reserved = 0;
    for (const up of this.uploads.values()) reserved += up.size;
    return (await this.storedBytes()) + reserved;
  }

  private storedBytes(): Promise<number> {
    this.stored ??= (async () => {
      let total = 0;
      let names: string[] = [];
      try {
        names = await readdir(this.dir);
      } catch {
        return 0;
      }
      for (const name of names) {
        if (!/^[0-9a-f]{64}$/.test(name)) continue;
        try {
          total += (await stat(this.path(name))).size;
        } catch {
          // Gone meanwhile.
        }
      }
      return total;
    })();
    return this.stored;
  }

  private addStored(delta: number): void {
    const before = this.storedBytes();
    this.stored = before.then((n) => Math.max(0, n + delta));
  }

  /** Throws, naming the cap, if `more` bytes would take the store past maxTotalBytes. */
  private async checkRoom(more: number, what: string): Promise<void> {
    const used = await this.usedBytes();
    if (used + more > this.maxTotalBytes) {
      throw new Error(
        `${what} (${more} bytes) would take this master's uploaded files to ${used + more} bytes, more than it keeps in all (wick.master.upload.maxTotalSize = ${this.maxTotalBytes} bytes; ${used} kept now): wait for running cluster-mode drivers to end (their files are then removed), or raise it on the masters`,
      );
    }
  }

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
    const needed = out.reduce((a, sha) => a + (sizes.get(sha) ?? 0), 0);
    await this.checkRoom(needed, "The application's files not kept yet");
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
      // Checked at each upload's start too: a peer may upload without asking what is missing.
      await this.checkRoom(size, `File ${sha256}`);
      await mkdir(this.dir, { recursive: true });
      up = {
        size,
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
    const already = await this.has(sha256);
    await rename(up.path, this.path(sha256));
    if (!already) this.addStored(size);
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
        const st = await stat(this.path(name));
        if (now - st.mtimeMs < graceMs) continue;
        await rm(this.path(name), { force: true });
        this.addStored(-st.size);
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
