import os from 'node:os';
import type { ClusterAuth } from '../rpc/clusterSecret.js';
import { getLogger } from '../util/log.js';

const log = getLogger('Master');

/**
 * Says at start-up how this master lets peers in: open (loudly: anyone who reaches its port can
 * run commands on every worker), or with the cluster secret — and, the first time, where the
 * secret it made is kept and the line that joins a worker to it (as k3s and kubeadm print theirs).
 */
export function announceAuth(
  auth: ClusterAuth & { generated?: boolean },
  address: string,
  highAvailability: boolean,
  /** The certificate the master serves TLS with, pinned by the join line; none on loopback. */
  fingerprint?: string,
): void {
  const pin = fingerprint ? ` --conf wick.ssl.fingerprint=${fingerprint}` : '';
  if (auth.mode === 'open') {
    log.warn(
      `RUNNING OPEN (wick.authenticate=false): anyone who can reach ${address} can run any command on every worker, as user ${os.userInfo().username}. Remove wick.authenticate=false to require the cluster secret.`,
    );
    return;
  }
  if (auth.mode !== 'secret') return;
  if (!auth.generated) {
    log.info(
      `Peers must prove the cluster secret (from ${auth.source}); \`wick join\` prints the line that joins a worker${fingerprint ? ` (pinning this master's certificate ${fingerprint})` : ''}`,
    );
    return;
  }
  log.info(`Generated the cluster secret in ${auth.source} (readable by this user only).`);
  process.stderr.write(
    [
      '',
      `To join a worker to this master, on the worker's machine, as the user that runs it: save the secret there with \`wick join --save\` (it reads the secret from stdin, pasted or piped, and keeps it in ~/.config/wick/cluster-secret, readable by that user only: nothing in a command line, an environment or shell history), then start the worker:`,
      '',
      `    secret: ${auth.secret}`,
      `    wick join --save`,
      `    wick worker wick://${address}${pin}`,
      '',
      `Clients on this machine find the secret by themselves; elsewhere save it the same way${pin ? ' (and give them wick.ssl.fingerprint, the certificate this master serves TLS with)' : ''}. \`wick join\` prints this again.${highAvailability ? ' Standby masters must have the same secret: copy the file to each, or set wick.authenticate.secret.file.' : ''}`,
      '',
    ].join('\n'),
  );
}
