import { conf, type WickConf } from '../conf/WickConf.js';

/** The RPC layer's settings. */
export const RpcConf = {
  askTimeout: conf.durationMs(
    'wick.rpc.askTimeout',
    '120s',
    'How long an ask waits for its reply before failing.',
  ),
  connectTimeout: conf.durationMs(
    'wick.rpc.connectTimeout',
    '30s',
    'How long connecting to a peer, including the handshake, may take.',
  ),
  maxMessageSize: conf.sizeBytes(
    'wick.rpc.message.maxSize',
    '128m',
    'The largest frame sent or accepted; larger ones are refused with an error naming both sizes.',
  ),
  portMaxRetries: conf.int(
    'wick.port.maxRetries',
    16,
    'How many successive ports to try after a busy one before giving up.',
    0,
    1000,
  ),
  authenticate: conf.bool(
    'wick.authenticate',
    false,
    'Whether peers must prove they share a secret before any message is accepted (when unset: true if WICK_AUTH_SECRET is set).',
  ),
  authenticateSecret: conf.string(
    'wick.authenticate.secret',
    '',
    'The shared secret for wick.authenticate (or set WICK_AUTH_SECRET).',
  ),
};

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
