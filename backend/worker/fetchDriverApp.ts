import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import type { FetchStats } from '../files/fetchFiles.js';
import { ADDED_FILES_ENV, APP_CODE_ENV } from '../protocol/childEnv.js';
import type { FileRef, ShippedFile } from '../protocol/files.js';
import { ShippedAppManifest } from '../protocol/files.js';
import { distFile } from '../util/paths.js';
import { WICK_SHIM, WICK_TREE_DIR, wickShim } from '../util/shippedCode.js';

/** Fetches files from the master this worker follows into a folder. */
export type MasterFetch = (files: readonly ShippedFile[], dest: string) => Promise<FetchStats>;

export interface FetchedDriverApp {
  /** The compiled entry module, to run. */
  entry: string;
  /** The environment that tells the driver where its tree and its files are. */
  env: Record<string, string>;
}

/**
 * A cluster-mode driver's application, fetched from the master into the driver's folder: the
 * manifest the submit left there, the code tree it names (with this host's `wick`), and the files
 * it ships, under their names (the driver adds them, so its executors get them too).
 */
export async function fetchDriverApp(
  fetch: MasterFetch,
  shipped: FileRef,
  dir: string,
): Promise<FetchedDriverApp> {
  const meta = join(dir, WICK_TREE_DIR);
  await fetch([{ path: 'shipped.json', ...shipped }], meta);
  const parsed: unknown = JSON.parse(await readFile(join(meta, 'shipped.json'), 'utf8'));
  if (!Value.Check(ShippedAppManifest, parsed)) {
    throw new Error(`The application's manifest ${shipped.sha256} from the master is not one`);
  }
  const app = join(dir, 'app');
  await fetch(parsed.code.files, app);
  const shim = join(app, ...WICK_SHIM.split('/'));
  await mkdir(join(shim, '..'), { recursive: true });
  await writeFile(shim, wickShim(pathToFileURL(distFile('cli/lib.mjs')).href));
  await writeFile(join(app, WICK_TREE_DIR, 'code.json'), JSON.stringify(parsed.code));
  const env: Record<string, string> = { [APP_CODE_ENV]: app };
  if (parsed.files.length > 0) {
    const files = join(dir, 'files');
    await fetch(parsed.files, files);
    env[ADDED_FILES_ENV] = files;
  }
  return { entry: join(app, ...parsed.code.entry.split('/')), env };
}
