import { conf } from './WickConf.js';

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
