import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConf } from '../../conf/load.js';
import { SslConf } from '../../conf/ssl.js';
import type { WickConf } from '../../conf/WickConf.js';
import { resolveClusterAuth } from '../../rpc/clusterSecret.js';
import { localClusterFingerprint } from '../../rpc/tls/clusterCertificate.js';
import { fingerprintOfPem } from '../../rpc/tls/fingerprint.js';
import { addConfOptions, masterUrlOf } from '../options.js';
import { saveSecretFromStdin } from './saveSecret.js';

interface JoinFlags {
  conf: string[];
  propertiesFile?: string;
  save?: boolean;
}

/**
 * `wick join [master-url]`: the line that joins a worker to this machine's master (as
 * `kubeadm token create --print-join-command` does), with the cluster secret found the one way
 * every Wick process finds it.
 */
export function registerJoin(program: Command): void {
  addConfOptions(
    program
      .command('join')
      .description(
        "Print the command that joins a worker to the master (it holds the cluster's secret)",
      )
      .argument(
        '[master-url]',
        'the master the worker joins (default wick.master, $WICK_MASTER, else wick://127.0.0.1:7077)',
      ),
  )
    .option(
      '--save',
      "on a worker's machine: read the cluster secret from stdin and keep it in this user's default secret file (~/.config/wick/cluster-secret, readable by this user only)",
    )
    .action(async (url: string | undefined, flags: JoinFlags) => {
      if (flags.save) {
        await saveSecretFromStdin();
        return;
      }
      // As every command reads its settings: --conf over --properties-file (or conf/'s
      // spark-defaults.conf and wick-defaults.conf, $WICK_CONF_DIR) over the environment.
      const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
      const master = masterUrlOf(url, conf);
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
      process.stdout.write(joinLines(auth.secret, master, pin(conf)));
    });
}

/**
 * How to join a worker without the secret on a command line, in an environment or in shell
 * history: `wick join --save` on the worker's machine reads it from stdin into that machine's
 * default secret file (readable by its user only), where `wick worker` finds it. `pin`: the
 * certificate's fingerprint option (below), for the worker to pin.
 */
export function joinLines(secret: string, master: string, pin = ''): string {
  return [
    `# On the worker's machine, as the user that runs the worker: save the secret (paste it when asked),`,
    `#   ${secret}`,
    `wick join --save`,
    `wick worker ${master}${pin}`,
    '',
  ].join('\n');
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
