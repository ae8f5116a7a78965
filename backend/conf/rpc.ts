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
    true,
    'Whether peers must prove they hold the cluster secret (or a key derived from it) before any message is accepted. A master always does, generating a secret on first start when none is set; false runs the cluster open to anyone who can reach its ports, and is logged as such.',
  ),
  authenticateSecret: conf.string(
    'wick.authenticate.secret',
    '',
    'The cluster secret. Read, first found wins, from this setting, the file wick.authenticate.secret.file, the WICK_AUTH_SECRET environment variable, then the default secret file.',
  ),
  authenticateSecretFile: conf.string(
    'wick.authenticate.secret.file',
    '',
    'A file holding the cluster secret (its first line). Default: $XDG_CONFIG_HOME/wick/cluster-secret (~/.config/wick/cluster-secret), where a master writes the secret it generates.',
  ),
  tokenFile: conf.string(
    'wick.authenticate.token.file',
    '',
    "A file holding a user's submit token (`wick token create` prints one): the CLI and the agent then prove that token, not the cluster secret, and may submit, watch, kill and read the logs of their own applications. Also WICK_TOKEN_FILE. Default: none, then the cluster secret (as found above), then $XDG_CONFIG_HOME/wick/token when it exists.",
  ),
};
