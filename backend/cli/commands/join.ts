import type { Command } from 'commander';
import { WickConf } from '../../conf/WickConf.js';
import { resolveClusterAuth } from '../../rpc/clusterSecret.js';
import { defaultMasterUrl } from '../options.js';
import { saveSecretFromStdin } from './saveSecret.js';

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
    .option(
      '--save',
      "on a worker's machine: read the cluster secret from stdin and keep it in this user's default secret file (~/.config/wick/cluster-secret, readable by this user only)",
    )
    .action(async (url: string | undefined, flags: { conf: string[]; save?: boolean }) => {
      if (flags.save) {
        await saveSecretFromStdin();
        return;
      }
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
        process.stdout.write(`wick worker ${master} --conf wick.authenticate=false\n`);
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
      process.stdout.write(joinLines(auth.secret, master));
    });
}

/**
 * How to join a worker without the secret on a command line, in an environment or in shell
 * history: `wick join --save` on the worker's machine reads it from stdin into that machine's
 * default secret file (readable by its user only), where `wick worker` finds it.
 */
export function joinLines(secret: string, master: string): string {
  return [
    `# On the worker's machine, as the user that runs the worker: save the secret (paste it when asked),`,
    `#   ${secret}`,
    `wick join --save`,
    `wick worker ${master}`,
    '',
  ].join('\n');
}
