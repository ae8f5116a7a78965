import { open, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { describeFiles, sha256File } from '../files/describeFiles.js';
import { MASTER_ENDPOINT } from '../protocol/endpoints.js';
import {
  type FileRef,
  MAX_FILE_CHUNK,
  RequestMissingFiles,
  type ShippedAppManifest,
  type ShippedFile,
  UploadFileChunk,
} from '../protocol/files.js';
import type { RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { parseMasterUrls } from '../rpc/masterUrls.js';
import { WICK_TREE_DIR } from '../util/shippedCode.js';
import type { BundledApp } from './bundle.js';

/** Bytes per UploadFileChunk: a round trip per MiB keeps a LAN busy and a frame small. */
const CHUNK = Math.min(MAX_FILE_CHUNK, 1024 * 1024);

/** A file to upload: what travels, and where it is here. */
interface Upload {
  file: ShippedFile;
  local: string;
}

/**
 * Leaves a cluster-mode application's files with the masters: its code tree, the files it ships
 * (--files), and the manifest naming them, whose SHA-256 is what the driver's description holds.
 * Every master named gets them (a standby that takes over must have them: ZooKeeper holds the
 * description, not the bytes); what a master has already (by content) is not sent again. A master
 * that cannot be reached is reported and skipped; none reachable is an error.
 */
export async function uploadToMasters(
  env: RpcEnv,
  masterUrl: string,
  app: BundledApp,
  addedFiles: readonly string[],
  progress: (line: string) => void,
): Promise<FileRef> {
  const uploads: Upload[] = app.code.files.map((file) => ({
    file,
    local: join(app.root, ...file.path.split('/')),
  }));
  const added: ShippedFile[] = [];
  for (const path of addedFiles) {
    const abs = resolve(path);
    const [file] = await describeFiles(dirname(abs), [basename(abs)]).catch((err: Error) => {
      throw new Error(
        `--files: cannot read ${abs}: ${(err as NodeJS.ErrnoException).code ?? err.message}`,
      );
    });
    added.push(file as ShippedFile);
    uploads.push({ file: file as ShippedFile, local: abs });
  }
  const manifest: ShippedAppManifest = { code: app.code, files: added };
  const manifestPath = join(app.root, WICK_TREE_DIR, 'shipped.json');
  await writeFile(manifestPath, JSON.stringify(manifest));
  const ref: FileRef = {
    sha256: await sha256File(manifestPath),
    size: Buffer.byteLength(JSON.stringify(manifest)),
  };
  uploads.push({ file: { path: 'shipped.json', ...ref }, local: manifestPath });

  const total = uploads.reduce((n, u) => n + u.file.size, 0);
  let reached = 0;
  const failures: string[] = [];
  for (const address of parseMasterUrls(masterUrl)) {
    let master: RpcEndpointRef;
    try {
      master = await env.setupEndpointRef(address, MASTER_ENDPOINT);
    } catch (err) {
      failures.push(`${address}: ${(err as Error).message}`);
      progress(
        `wick: cannot reach master ${address} to leave the application's files there (${(err as Error).message}); should it lead later, it cannot launch this driver`,
      );
      continue;
    }
    const { sha256s } = await master.ask(
      RequestMissingFiles({ files: uploads.map((u) => u.file) }),
    );
    const missing = new Set(sha256s);
    const todo = uploads.filter((u) => missing.has(u.file.sha256) && missing.delete(u.file.sha256));
    const bytes = todo.reduce((n, u) => n + u.file.size, 0);
    progress(
      todo.length === 0
        ? `Master ${address} has the application's ${uploads.length} files (${total} bytes) already`
        : `Uploading ${todo.length} of the application's ${uploads.length} files (${bytes} of ${total} bytes) to master ${address}…`,
    );
    let sent = 0;
    let lastShown = Date.now();
    for (const u of todo) {
      await uploadOne(master, u, (n) => {
        sent += n;
        if (Date.now() - lastShown > 1000) {
          lastShown = Date.now();
          progress(
            `  ${Math.round((100 * sent) / Math.max(1, bytes))}% (${sent} of ${bytes} bytes)`,
          );
        }
      });
    }
    reached++;
  }
  if (reached === 0) {
    throw new Error(
      `No master could take the application's files: ${failures.join('; ')}. Check --master and that the masters run.`,
    );
  }
  return ref;
}

async function uploadOne(
  master: RpcEndpointRef,
  u: Upload,
  sent: (bytes: number) => void,
): Promise<void> {
  const file = await open(u.local, 'r');
  try {
    const buf = Buffer.alloc(CHUNK);
    let offset = 0;
    do {
      const { bytesRead } = await file.read(buf, 0, Math.min(CHUNK, u.file.size - offset), offset);
      if (bytesRead === 0 && offset < u.file.size) {
        throw new Error(`${u.local} got shorter while it was uploaded`);
      }
      const reply = await master.ask(
        UploadFileChunk({
          sha256: u.file.sha256,
          size: u.file.size,
          offset,
          data: buf.subarray(0, bytesRead).toString('base64'),
        }),
      );
      offset += bytesRead;
      sent(bytesRead);
      if (reply.complete) return;
    } while (offset < u.file.size);
  } finally {
    await file.close();
  }
}
