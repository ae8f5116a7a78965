import type { Command } from 'commander';
import { uiClusterSecret } from '../../http/uiAuth.js';
import {
  clientConf,
  type LocalClusterOptions,
  startLocalCluster,
} from '../../launcher/localClusterProcess.js';
import { LOGIN_LINK_TTL_MS, loginLink } from '../../shared/uiLogin.js';
import { collect } from '../options.js';

/** The options as commander gives them: the counts still strings. */
type Flags = Omit<LocalClusterOptions, 'workers' | 'masters'> & {
  workers: string;
  masters: string;
};

/**
 * `wick local-cluster`: a master and N workers on this machine, ready when every worker is
 * registered; Ctrl+C or SIGTERM stops them all and leaves no process behind.
 */
export function registerLocalCluster(program: Command): void {
  program
    .command('local-cluster')
    .description('Start a master and N workers on this machine, and stop them all on Ctrl+C')
    .option('-w, --workers <n>', 'number of workers', '2')
    .option('-c, --cores <n>', 'cores per worker', '1')
    .option('-m, --memory <size>', 'memory per worker', '1g')
    .option('--host <host>', 'address for every daemon', '127.0.0.1')
    .option(
      '--port <port>',
      'master RPC port (0 picks a free one; the next master the next)',
      '7077',
    )
    .option('--webui-port <port>', 'master web UI port (0 picks a free one)', '8080')
    .option('--masters <n>', 'number of masters: one leads, the others are STANDBY', '1')
    .option(
      '--zookeeper <host:port>',
      'ZooKeeper for the masters (recovery mode ZOOKEEPER); needed by --masters above 1',
    )
    .option(
      '-d, --work-dir <dir>',
      'where workers run executors and daemons write their logs',
      'work',
    )
    .option('--conf <key=value>', 'configuration for every daemon (repeatable)', collect, [])
    .option(
      '--properties-file <file>',
      'configuration for every daemon from this file (default: spark-defaults.conf and wick-defaults.conf in $WICK_CONF_DIR or conf/)',
    )
    .action(async (flags: Flags) => {
      const workers = Number(flags.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
        throw new Error(`--workers must be a whole number from 1 to 64, got "${flags.workers}"`);
      }
      const masters = Number(flags.masters);
      if (!Number.isInteger(masters) || masters < 1 || masters > 9) {
        throw new Error(`--masters must be a whole number from 1 to 9, got "${flags.masters}"`);
      }
      let stopping = false;
      let stop: (() => Promise<void>) | undefined;
      const onSignal = (signal: NodeJS.Signals) => {
        stopping = true;
        process.stderr.write(`\nReceived ${signal}: stopping the local cluster…\n`);
        void (stop?.() ?? Promise.resolve()).then(() => process.exit(0));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const cluster = await startLocalCluster({ ...flags, workers, masters }, (line) =>
        process.stderr.write(`${line}\n`),
      );
      stop = cluster.stop;
      process.stdout.write(`${cluster.url}\n`);
      // Found as the daemons found it (they were given the same --conf), after they started: a
      // master that made a secret on first start has written it by now.
      const secret = uiClusterSecret(clientConf(flags));
      const webUi = secret
        ? `${loginLink(cluster.webUiUrl, secret)} (a login link, valid once for ${LOGIN_LINK_TTL_MS / 60_000} minutes; \`wick ui-url\` prints another)`
        : cluster.webUiUrl;
      process.stderr.write(
        `Local cluster ready: master${masters > 1 ? 's' : ''} ${cluster.url}, web UI ${webUi}, ${workers} worker(s) × ${flags.cores} core(s), ${flags.memory}.\nDaemon logs in ${cluster.logDir}. Press Ctrl+C to stop.\n`,
      );
      const first = await cluster.firstExit;
      if (!stopping) {
        process.stderr.write(
          `${first.name} exited unexpectedly; see ${first.log}. Stopping the rest.\n`,
        );
        await cluster.stop();
        process.exit(1);
      }
    });
}
