import type { WickConf } from '../conf/WickConf.js';
import { ensureClusterSecret, resolveClusterAuth } from '../rpc/clusterSecret.js';
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
