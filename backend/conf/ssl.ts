import { conf } from './WickConf.js';

/**
 * Encryption on the wire (Spark's spark.ssl.* and spark.network.crypto.enabled): TLS 1.3 for the
 * RPC ports (master, workers, their shuffle services, drivers, executors) and the web UIs. Read
 * by every process: a daemon for what it serves, anyone for what it dials.
 */
export const SslConf = {
  enabled: conf.bool(
    'wick.ssl.enabled',
    true,
    "TLS 1.3 on every RPC port and web UI bound to an address other than loopback, and on every connection dialled to one. A port bound to loopback stays plain (wick.ssl.loopback), and so may a connection from this machine's loopback to a port bound to all addresses. false: plaintext everywhere (Spark's default), as before; a peer that requires TLS then refuses this one. Spark's spark.ssl.enabled and spark.network.crypto.enabled mean this.",
  ),
  loopback: conf.bool(
    'wick.ssl.loopback',
    false,
    'Encrypt connections to and from loopback too. Off by default: nothing on loopback leaves the machine, and the bench (bench/tls.bench.ts) measures what TLS costs there.',
  ),
  certFile: conf.string(
    'wick.ssl.certFile',
    '',
    'The certificate (PEM) this process serves TLS with, with wick.ssl.keyFile: to bring your own. Default: a master uses the cluster\'s certificate, made on its first start beside the cluster secret (cluster-tls.crt); anyone else that serves (a worker, a driver, an executor) makes its own when it starts, proved by the handshake (docs/protocol.md, "Encryption"). Spark\'s spark.ssl.certChain means this.',
  ),
  keyFile: conf.string(
    'wick.ssl.keyFile',
    '',
    "The private key (PEM, unencrypted) of wick.ssl.certFile. Keep it readable by the daemon's user only. Spark's spark.ssl.privateKey means this.",
  ),
  fingerprint: conf.string(
    'wick.ssl.fingerprint',
    '',
    "The SHA-256 fingerprint(s) of the masters' certificates that this process pins (sha256:<64 hex>, or the colon-separated form browsers show; several separated by commas): a master that presents another certificate is refused. The join line `wick join` prints carries it; on the master's machine it is read from the cluster's certificate by itself; a process a worker starts is given it by the worker (WICK_TLS_FINGERPRINT). Spark's spark.ssl.trustStore has no equal: Wick pins rather than trusts a CA.",
  ),
};
