import { randomBytes } from 'node:crypto';
import { WickConf } from '../conf/WickConf.js';
import { resolveClusterAuth } from '../rpc/clusterSecret.js';
import { APP_CREDENTIAL_ENV, deriveKey, formatCredential } from '../rpc/credentials.js';

/**
 * A client-mode driver runs in this very process, so before it starts the secret leaves the
 * environment and a submission's key takes its place (credentials.ts): the application can
 * register itself and talk to its executors, and nothing else. Nothing changes in a cluster that
 * runs open.
 */
export function handOverToDriver(
  conf: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const found = resolveClusterAuth(new WickConf(conf), env);
  delete env.WICK_AUTH_SECRET;
  if (found.mode !== 'secret') return;
  const id = `submission-${randomBytes(12).toString('hex')}`;
  env[APP_CREDENTIAL_ENV] = formatCredential({
    kind: 'submission',
    id,
    key: deriveKey(found.secret, 'submission', id),
  });
}
