import { SslConf } from '../../conf/ssl.js';
import type { WickConf } from '../../conf/WickConf.js';
import { ensureClusterCertificate, readConfiguredCertificate } from './clusterCertificate.js';
import { WireSecurity } from './WireSecurity.js';

/**
 * A master's TLS: wick.ssl.certFile when set, else the cluster's certificate, made on the first
 * start (kept with the secret) whenever TLS is on, even on loopback, so that `wick join` has the
 * fingerprint to print before the master is ever bound elsewhere. Its RpcEnv and its web UI
 * serve it on a bind address other than loopback.
 */
export async function masterSecurity(conf: WickConf, host: string): Promise<WireSecurity> {
  if (!conf.get(SslConf.enabled)) return WireSecurity.fromConf(conf);
  const served =
    readConfiguredCertificate(conf.get(SslConf.certFile), conf.get(SslConf.keyFile)) ??
    (await ensureClusterCertificate(conf, [host]));
  return WireSecurity.fromConf(conf, { bindHost: host, served, name: 'master' });
}
