import { RpcConf } from '../conf/rpc.js';
import type { WickConf } from '../conf/WickConf.js';

/**
 * The secret when this env authenticates: wick.authenticate decides, and when it is not set, a
 * secret in WICK_AUTH_SECRET turns authentication on. That way every process of a cluster started
 * with the secret in its environment (daemons, executors, drivers, CLI commands) authenticates.
 */
export function authSecret(settings: WickConf): string | undefined {
  const on = settings.contains(RpcConf.authenticate.key)
    ? settings.get(RpcConf.authenticate)
    : Boolean(process.env.WICK_AUTH_SECRET);
  if (!on) return undefined;
  const secret = settings.get(RpcConf.authenticateSecret) || process.env.WICK_AUTH_SECRET || '';
  if (secret === '') {
    throw new Error(
      'wick.authenticate is true but no secret is set: set wick.authenticate.secret or the WICK_AUTH_SECRET environment variable',
    );
  }
  return secret;
}
