import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { SslConf } from '../../conf/ssl.js';
import { WickConf } from '../../conf/WickConf.js';
import { resolveClusterAuth } from '../../rpc/clusterSecret.js';
import { localClusterFingerprint } from '../../rpc/tls/clusterCertificate.js';
import { fingerprintOfPem } from '../../rpc/tls/fingerprint.js';
import { defaultMasterUrl } from '../options.js';

/**
 * `wick join [master-url]`: the line that joins a worker to this machine's master (as
 * `kubeadm token create --print-join-command` does), with the cluster secret found the one way
 * every Wick process finds it.
 */
export function registerJoin(program: Command): void {
  program
    .command('join')
    .description(
      "Print the command that joins a worker to the master (it holds the cluster's secret)",
    )
    .argument(
      '[master-url]',
      'the master the worker joins (default $WICK_MASTER or wick://127.0.0.1:7077)',
    )
    .option('--conf <key=value...>', 'settings, e.g. wick.authenticate.secret.file=…', [])
    .action((url: string | undefined, flags: { conf: string[] }) => {
      const conf = new WickConf(
        flags.conf.map((pair) => {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw new Error(`Invalid --conf "${pair}": expected key=value`);
          return [pair.slice(0, eq), pair.slice(eq + 1)] as [string, string];
        }),
      );
      const master = url ?? defaultMasterUrl();
      const auth = resolveClusterAuth(conf);
      if (auth.mode === 'open') {
        process.stdout.write(`wick worker ${master} --conf wick.authenticate=false${pin(conf)}\n`);
        process.stderr.write(
          'This cluster runs open (wick.authenticate=false): anyone can join it.\n',
        );
        return;
      }
      if (auth.mode === 'none') {
        throw new Error(
          `No cluster secret here (looked in wick.authenticate.secret, wick.authenticate.secret.file, WICK_AUTH_SECRET and ${auth.file}): run this where the master runs, as its user`,
        );
      }
      process.stdout.write(`WICK_AUTH_SECRET=${auth.secret} wick worker ${master}${pin(conf)}\n`);
    });
}

/**
 * ` --conf wick.ssl.fingerprint=…`: the certificate the master serves TLS with, for the worker to
 * pin (as kubeadm's --discovery-token-ca-cert-hash): wick.ssl.certFile's, or the cluster's, kept
 * with the secret. Nothing when TLS is off or the master has not made one yet.
 */
function pin(conf: WickConf): string {
  if (!conf.get(SslConf.enabled)) return '';
  const own = conf.get(SslConf.certFile);
  const fingerprint = own
    ? fingerprintOfPem(readFileSync(own, 'utf8'))
    : localClusterFingerprint(conf);
  return fingerprint ? ` --conf ${SslConf.fingerprint.key}=${fingerprint}` : '';
}
