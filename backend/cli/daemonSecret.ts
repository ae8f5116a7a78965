import { RpcConf } from '../conf/rpc.js';
import type { WickConf } from '../conf/WickConf.js';
import {
  ensureClusterSecret,
  moveSecretIntoConf,
  resolveClusterAuth,
} from '../rpc/clusterSecret.js';
import { readSecretStdin } from './secretStdin.js';

/**
 * The secret `wick start-*` hands its daemon on fd 3: from stdin with `--secret-stdin`, else
 * WICK_AUTH_SECRET; undefined when the daemon is to find its own (conf, a secret file).
 */
export async function secretToHandOn(
  secretStdin: boolean | undefined,
): Promise<string | undefined> {
  if (secretStdin) return readSecretStdin();
  return process.env.WICK_AUTH_SECRET || undefined;
}

/**
 * Before a master is started in the background: makes the cluster secret here when there is none,
 * as the master would — but a master that makes it prints it in its join line, which would then
 * sit in its log file. Says where it is, not what it is.
 */
export function ensureSecretBeforeMaster(conf: WickConf, handedOn: string | undefined): void {
  if (handedOn !== undefined) return;
  const found = ensureClusterSecret(resolveClusterAuth(conf));
  if (found.mode === 'secret' && found.generated) {
    process.stdout.write(
      `generated the cluster secret in ${found.source} (readable by this user only); \`wick join\` prints the line that joins a worker\n`,
    );
  }
}

/**
 * A master's or worker's WICK_AUTH_SECRET goes into its configuration, where a secret handed on
 * fd 3 goes, and out of its environment (process.env): the daemon never keeps it there after
 * start (issue 28), nor does anything it starts inherit it. Taken only where it is the secret the
 * daemon would use (clusterSecret.ts: a setting or a secret file comes first), and deleted either
 * way. What /proc/<pid>/environ showed of it is masked already (startupSecrets.ts).
 */
export function takeSecretFromEnvironment(
  conf: WickConf,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const value = env.WICK_AUTH_SECRET;
  if (value === undefined) return;
  delete env.WICK_AUTH_SECRET;
  if (
    value !== '' &&
    !conf.get(RpcConf.authenticateSecret) &&
    !conf.get(RpcConf.authenticateSecretFile)
  ) {
    moveSecretIntoConf(conf, value, 'WICK_AUTH_SECRET');
  }
}
