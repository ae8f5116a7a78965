import { dirname, join, resolve } from 'node:path';
import { SandboxConf } from '../../conf/sandbox.js';
import type { WickConf } from '../../conf/WickConf.js';
import { defaultSecretFile } from '../../rpc/clusterSecret.js';
import { RpcConf } from '../../rpc/index.js';
import { compileCacheDir } from '../../util/compileCache.js';
import { getLogger } from '../../util/log.js';
import { chooseSandbox, parseReadOnlyPaths, type Sandbox } from './Sandbox.js';

const log = getLogger('Worker');

/** In the work dir; a dot-name, so the work dir's cleanup leaves it (workDirCleanup.ts). */
export const SANDBOX_COMPILE_CACHE_DIR = '.compile-cache';

/**
 * The worker's sandbox, from its settings; a worker that runs applications open says so loudly
 * (a banner in its log, at start), and one told to confine that cannot refuses to start.
 */
export function chooseWorkerSandbox(
  conf: WickConf,
  workDir: string,
  localDirs: readonly string[],
): Sandbox | undefined {
  const secretFile = conf.get(RpcConf.authenticateSecretFile);
  const choice = chooseSandbox(conf.get(SandboxConf.mode), {
    workDir,
    localDirRoots: localDirs.map((d) => resolve(d)),
    secretDirs: [dirname(defaultSecretFile())],
    secretFiles: secretFile ? [resolve(secretFile)] : [],
    extraReadOnly: parseReadOnlyPaths(conf.get(SandboxConf.readOnlyPaths)),
    // The worker's own, not the user's (~/.cache/wick/compile), which any process of the user may
    // write, an executor of another worker that runs applications open included. None when the
    // worker was told to run without a cache (WICK_COMPILE_CACHE=off).
    ...(compileCacheDir() === undefined
      ? {}
      : { compileCache: join(resolve(workDir), SANDBOX_COMPILE_CACHE_DIR) }),
  });
  if (choice.warning) {
    const bar = '!'.repeat(78);
    log.warn(`\n${bar}\nWARNING: ${choice.warning}\n${bar}`);
  } else if (choice.sandbox) {
    log.info(`Executors and cluster-mode drivers run confined: ${choice.sandbox.description}`);
  }
  return choice.sandbox;
}
