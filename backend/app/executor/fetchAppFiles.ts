import { createHash } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fetchFiles, fetchOnce } from '../../files/fetchFiles.js';
import { shippedPathUnder } from '../../files/shippedPath.js';
import { EXECUTOR_DIRS_ENV } from '../../protocol/childEnv.js';
import type { AppCode, ShippedFile } from '../../protocol/files.js';
import type { RpcEndpointRef } from '../../rpc/index.js';
import { getLogger } from '../../util/log.js';
import { distFile } from '../../util/paths.js';
import { WICK_SHIM, wickShim } from '../../util/shippedCode.js';

const log = getLogger('Executor');

/**
 * Where an executor keeps what it fetched of its application: the application's first local dir
 * on this worker (WICK_EXECUTOR_DIRS), which the executors of the application here share and the
 * worker removes when the application ends; else (an executor run by hand) its working folder.
 */
export function appLocalDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[EXECUTOR_DIRS_ENV]?.split(delimiter)[0] || process.cwd();
}

/**
 * The application's code tree on this host: fetched from the driver's file server once per
 * application and worker (the first executor here fetches it, the next ones find it), by the
 * manifest's hash, with this host's own `wick`.
 */
export async function fetchAppCode(
  server: RpcEndpointRef,
  code: AppCode,
  localDir = appLocalDir(),
): Promise<string> {
  const key = `code-${createHash('sha256').update(JSON.stringify(code)).digest('hex').slice(0, 24)}`;
  const startedAt = Date.now();
  const { path, fetched } = await fetchOnce(localDir, key, async (into) => {
    const stats = await fetchFiles(server, code.files, into);
    const shim = join(into, ...WICK_SHIM.split('/'));
    await mkdir(join(shim, '..'), { recursive: true });
    await writeFile(shim, wickShim(pathToFileURL(distFile('cli/lib.mjs')).href));
    return stats;
  });
  if (fetched) {
    log.info(
      `Fetched the application's code from ${server.address}: ${fetched.files} files, ${fetched.bytes} bytes in ${Date.now() - startedAt} ms`,
    );
  }
  return path;
}

/**
 * Fetches the added files this executor does not have yet into `filesDir`, each under its name.
 * A file lands whole or not at all (fetched beside, then renamed), so a task never reads half.
 */
export async function fetchAddedFiles(
  server: RpcEndpointRef,
  files: readonly ShippedFile[],
  filesDir: string,
): Promise<void> {
  await mkdir(filesDir, { recursive: true });
  for (const f of files) {
    const target = shippedPathUnder(filesDir, f.path);
    // Fetched already by another executor of the application here (names are never reused).
    if ((await stat(target).catch(() => undefined))?.size === f.size) continue;
    const partial = join(filesDir, `.${f.sha256}.${process.pid}`);
    await rm(partial, { recursive: true, force: true });
    try {
      await fetchFiles(server, [{ ...f, path: 'file' }], partial);
      await rename(join(partial, 'file'), target);
      log.info(`Fetched ${f.path} (${f.size} bytes) from ${server.address}`);
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
}
