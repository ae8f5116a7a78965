import type { WickConf } from '../../conf/WickConf.js';
import { resolveClusterAuth } from '../../rpc/clusterSecret.js';
import { APP_CREDENTIAL_ENV, AppKeyRing, parseCredential } from '../../rpc/credentials.js';
import type { RpcAuth } from '../../rpc/index.js';

/**
 * How a driver's RpcEnv authenticates (credentials.ts). Started by `wick submit` or by a worker,
 * it holds a submission's key (WICK_APP_CREDENTIAL) and never the cluster secret; run by hand by
 * whoever holds the secret, it uses that. Either way it lets in only connections that prove its
 * application's key — its executors — once the master has told it the key (RegisteredApplication).
 */
export function driverAuth(
  conf: WickConf,
  env: NodeJS.ProcessEnv = process.env,
): { auth: RpcAuth; appKeys: AppKeyRing | undefined } {
  const handed = env[APP_CREDENTIAL_ENV];
  if (handed) {
    const credential = parseCredential(handed);
    const appKeys = new AppKeyRing();
    return { auth: { credential, keys: appKeys }, appKeys };
  }
  const found = resolveClusterAuth(conf, env);
  if (found.mode !== 'secret')
    return { auth: { credential: undefined, keys: undefined }, appKeys: undefined };
  const appKeys = new AppKeyRing();
  return { auth: { credential: { kind: 'cluster', key: found.secret }, keys: appKeys }, appKeys };
}

/** An executor's: the key its worker handed it, or nothing in a cluster that runs open. */
export function executorAuth(env: NodeJS.ProcessEnv = process.env): RpcAuth {
  const handed = env[APP_CREDENTIAL_ENV];
  return { credential: handed ? parseCredential(handed) : undefined, keys: undefined };
}
