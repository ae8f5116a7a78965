import { type Command, Option } from 'commander';
import { loadConf } from '../../conf/load.js';
import { appIdClaims } from '../../eventlog/appIdClaims.js';
import { masterEventLogDir } from '../../eventlog/eventLogDir.js';
import { MasterWebUI } from '../../http/MasterWebUI.js';
import { WorkerWebUI } from '../../http/WorkerWebUI.js';
import { startMaster } from '../../master/startMaster.js';
import { parseMasterUrls } from '../../rpc/masterUrls.js';
import { getLogger } from '../../util/log.js';
import { decommissionOnSigpwr } from '../../worker/decommissionSignal.js';
import { startWorker } from '../../worker/startWorker.js';
import { takeSecretFromEnvironment } from '../daemonSecret.js';
import { addConfOptions, exitWithParent, onSignals } from '../options.js';
import { warnAboutExposedSecret } from '../secretExposure.js';
import { applySecretFd } from '../secretFromFd.js';
import { startMasterRest } from './masterRest.js';

const log = getLogger('wick');

interface DaemonFlags {
  host?: string;
  port?: string;
  webuiPort?: string;
  conf: string[];
  propertiesFile?: string;
  printReady?: boolean;
  exitWithParent?: boolean;
  secretFd?: string;
}

/** `wick master` and `wick worker`: the two daemons, as Spark's start-master.sh / start-worker.sh. */
export function registerDaemons(program: Command): void {
  addConfOptions(
    program
      .command('master')
      .description('Run a master daemon')
      .option('--host <host>', 'address to bind and advertise (default: this machine’s name)')
      .option('--port <port>', 'RPC port (default 7077; 0 picks a free one)')
      .option('--webui-port <port>', 'web UI port (default 8080; 0 picks a free one)'),
  )
    .option(
      '--print-ready',
      'once serving, print one JSON line {"url", "webUiUrl", "restUrl" when wick.master.rest.enabled} on stdout (logs go to stderr): for scripts and tests, e.g. with --port 0',
    )
    .addOption(hidden('--exit-with-parent', 'stop when stdin closes'))
    .addOption(hidden('--secret-fd <n>', 'read the cluster secret from this file descriptor'))
    .action(async (flags: DaemonFlags) => {
      const conf = loadConf({
        confPairs: flags.conf,
        propertiesFile: flags.propertiesFile,
        flags: [
          { flag: '--host', key: 'wick.master.host', value: flags.host },
          { flag: '--port', key: 'wick.master.port', value: flags.port },
          { flag: '--webui-port', key: 'wick.master.ui.port', value: flags.webuiPort },
        ],
      });
      await applySecretFd(conf, flags.secretFd);
      warnAboutExposedSecret('master');
      takeSecretFromEnvironment(conf);
      const logDir = masterEventLogDir(conf);
      const running = await startMaster(conf, {
        webUi: (master, host, port, retries, c, security) =>
          MasterWebUI.start(master, host, port, retries, c, security, logDir),
        ...(logDir ? { eventLogs: { dir: logDir, claimAppId: appIdClaims(logDir).claim } } : {}),
      });
      const rest = await startMasterRest(running, conf).catch(async (err: unknown) => {
        await running.stop();
        throw err;
      });
      const stop = async () => {
        await rest?.stop();
        await running.stop();
      };
      onSignals(stop);
      if (flags.exitWithParent) exitWithParent(() => stop().then(() => process.exit(0)));
      if (flags.printReady) {
        process.stdout.write(
          `${JSON.stringify({ url: running.url, webUiUrl: running.master.webUiUrl, ...(rest ? { restUrl: `${rest.scheme}://${running.env.rpcAddress?.host}:${rest.port}` } : {}) })}\n`,
        );
      }
      await running.env.awaitTermination();
    });

  addConfOptions(
    program
      .command('worker')
      .description('Run a worker daemon that offers its cores and memory to the master(s)')
      .argument('<master-url>', 'wick://host:port, or several: wick://h1:7077,h2:7077')
      .option('--host <host>', 'address to bind and advertise (default: this machine’s name)')
      .option('--port <port>', 'RPC port (default 0: a free one)')
      .option('--webui-port <port>', 'web UI port (default 8081)')
      .option('-c, --cores <n>', 'cores to offer (default: all)')
      .option('-m, --memory <size>', 'memory to offer, e.g. 2g (default: total RAM − 1 GiB)')
      .option('-d, --work-dir <dir>', 'where executors and drivers run (default ./work)'),
  )
    .option(
      '--print-ready',
      'once serving, print one JSON line {"address", "workerId", "webUiUrl"} on stdout (logs go to stderr): for scripts and tests',
    )
    .addOption(hidden('--exit-with-parent', 'stop when stdin closes'))
    .addOption(hidden('--secret-fd <n>', 'read the cluster secret from this file descriptor'))
    .action(
      async (
        masterUrl: string,
        flags: DaemonFlags & { cores?: string; memory?: string; workDir?: string },
      ) => {
        const masters = parseMasterUrls(masterUrl);
        const conf = loadConf({
          confPairs: flags.conf,
          propertiesFile: flags.propertiesFile,
          flags: [
            { flag: '--host', key: 'wick.worker.host', value: flags.host },
            { flag: '--port', key: 'wick.worker.port', value: flags.port },
            { flag: '--webui-port', key: 'wick.worker.ui.port', value: flags.webuiPort },
            { flag: '--cores', key: 'wick.worker.cores', value: flags.cores },
            { flag: '--memory', key: 'wick.worker.memory', value: flags.memory },
            { flag: '--work-dir', key: 'wick.worker.dir', value: flags.workDir },
          ],
        });
        await applySecretFd(conf, flags.secretFd);
        warnAboutExposedSecret('worker');
        takeSecretFromEnvironment(conf);
        let running: Awaited<ReturnType<typeof startWorker>> | undefined;
        const stop = async () => {
          await running?.stop();
        };
        running = await startWorker(conf, masters, {
          webUi: (host, port, maxRetries, security) =>
            WorkerWebUI.start(host, port, maxRetries, conf, security),
          exit: (code, reason) => {
            if (code === 0) log.info(`Worker exiting: ${reason}`);
            else log.error(`Worker exiting: ${reason}`);
            void stop().then(() => process.exit(code));
          },
        });
        onSignals(stop);
        decommissionOnSigpwr(conf, running.worker);
        if (flags.exitWithParent) exitWithParent(() => stop().then(() => process.exit(0)));
        if (flags.printReady) {
          process.stdout.write(
            `${JSON.stringify({ address: running.env.address, workerId: running.worker.workerId, webUiUrl: running.worker.webUiUrl })}\n`,
          );
        }
        await running.env.awaitTermination();
      },
    );
}

function hidden(flags: string, description: string) {
  // Hidden from --help: for wick's own launchers and tests.
  return new Option(flags, description).hideHelp();
}
