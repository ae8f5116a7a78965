/**
 * `wick start-all`, `stop-all`, `start-workers`, `stop-workers`: Spark's sbin scripts of the same
 * names. start-all starts the master here, then a worker on each host of conf/workers
 * (backend/launcher/cluster/: ssh, in parallel, output prefixed by host); stop-all stops the
 * workers, then the master. The cluster secret found here (the master's) goes to each worker on
 * ssh's stdin, never on a command line.
 */

import { dirname } from 'node:path';
import { type Command, Option } from 'commander';
import { DaemonConf } from '../../conf/daemon.js';
import { DaemonLauncherConf } from '../../conf/daemonLauncher.js';
import { loadConf } from '../../conf/load.js';
import type { WickConf } from '../../conf/WickConf.js';
import { type HostResult, runOnHosts } from '../../launcher/cluster/onHosts.js';
import { readWorkerHosts } from '../../launcher/cluster/workersFile.js';
import { daemonDirs } from '../../launcher/daemon/daemonFiles.js';
import { DaemonStartError, startDaemon } from '../../launcher/daemon/startDaemon.js';
import { stopDaemon } from '../../launcher/daemon/stopDaemon.js';
import { withoutInstances } from '../../launcher/daemon/workerInstances.js';
import { resolveClusterAuth } from '../../rpc/clusterSecret.js';
import { distFile } from '../../util/paths.js';
import { ensureSecretBeforeMaster } from '../daemonSecret.js';
import { addConfOptions } from '../options.js';

interface ScriptFlags {
  conf: string[];
  propertiesFile?: string;
  master?: string;
}

export function registerClusterScripts(program: Command): void {
  script(
    program,
    'start-all',
    'Start a master here and a worker on each host of conf/workers (Spark’s start-all.sh)',
  ).action(async (flags: ScriptFlags) => {
    const conf = confOf(flags);
    const url = await startMasterHere(conf, flags);
    const failed = await onWorkers('start-worker', conf, url);
    if (failed) process.exitCode = 1;
  });
  script(
    program,
    'stop-all',
    'Stop the worker on each host of conf/workers, then the master here (Spark’s stop-all.sh)',
  ).action(async (flags: ScriptFlags) => {
    const conf = confOf(flags);
    const failed = await onWorkers('stop-worker', conf, undefined);
    const stopped = await stopDaemon(
      daemonDirs(),
      'master',
      1,
      conf.get(DaemonLauncherConf.stopTimeout),
    );
    process.stdout.write(
      stopped.kind === 'stopped'
        ? `stopped master (process ${stopped.pid})\n`
        : 'no master to stop\n',
    );
    if (failed) process.exitCode = 1;
  });
  script(
    program,
    'start-workers',
    'Start a worker on each host of conf/workers (Spark’s start-workers.sh)',
  )
    .addOption(masterOption())
    .action(async (flags: ScriptFlags) => {
      const conf = confOf(flags);
      if (await onWorkers('start-worker', conf, flags.master ?? masterUrlFromConf(conf)))
        process.exitCode = 1;
    });
  script(
    program,
    'stop-workers',
    'Stop the worker on each host of conf/workers (Spark’s stop-workers.sh)',
  ).action(async (flags: ScriptFlags) => {
    if (await onWorkers('stop-worker', confOf(flags), undefined)) process.exitCode = 1;
  });
}

function script(program: Command, name: string, description: string): Command {
  return addConfOptions(program.command(name).description(description));
}

function masterOption(): Option {
  return new Option(
    '--master <url>',
    'the master the workers join (default wick://<wick.master.host>:<wick.master.port> of this machine’s settings)',
  );
}

function confOf(flags: ScriptFlags): WickConf {
  return loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
}

/** Spark's start-workers.sh: spark://$SPARK_MASTER_HOST:$SPARK_MASTER_PORT. */
function masterUrlFromConf(conf: WickConf): string {
  return `wick://${conf.get(DaemonConf.masterHost)}:${conf.get(DaemonConf.masterPort)}`;
}

/** The master's URL once started (or already running, as start-all.sh carries on then too). */
async function startMasterHere(conf: WickConf, flags: ScriptFlags): Promise<string> {
  // The master takes this command's --conf and --properties-file; the workers read their own
  // machine's conf/.
  const args = [
    ...flags.conf.flatMap((c) => ['--conf', c]),
    ...(flags.propertiesFile ? ['--properties-file', flags.propertiesFile] : []),
  ];
  const secret = process.env.WICK_AUTH_SECRET || undefined;
  ensureSecretBeforeMaster(conf, secret);
  try {
    const started = await startDaemon({
      kind: 'master',
      instance: 1,
      args,
      dirs: daemonDirs(),
      env: withoutInstances(process.env),
      secret,
      startTimeoutMs: conf.get(DaemonLauncherConf.startTimeout),
      note: (line) => process.stdout.write(`${line}\n`),
    });
    const url = String(started.ready.url);
    process.stdout.write(
      `started master (process ${started.pid}) at ${url}, web UI ${String(started.ready.webUiUrl)}, logging to ${started.files.logFile}\n`,
    );
    return url;
  } catch (err) {
    if (!(err instanceof DaemonStartError)) throw err;
    process.stderr.write(`${err.message}\n`);
    if (!/Stop it first/.test(err.message))
      throw new Error('the master did not start: no worker started');
    return masterUrlFromConf(conf);
  }
}

/** Runs `wick <command>` on every worker host; true when any failed. */
async function onWorkers(
  command: 'start-worker' | 'stop-worker',
  conf: WickConf,
  masterUrl: string | undefined,
): Promise<boolean> {
  const workers = readWorkerHosts();
  if (workers.deprecation) process.stderr.write(`${workers.deprecation}\n`);
  let args: string[] = [command];
  let stdin: string | undefined;
  if (command === 'start-worker') {
    // Read after the master started: a master without a secret made one, in this machine's
    // default secret file.
    const auth = resolveClusterAuth(conf);
    if (auth.mode === 'secret') {
      args.push('--secret-stdin');
      stdin = `${auth.secret}\n`;
    }
    args = [...args, masterUrl as string];
  }
  const cli = distFile('wick.cjs');
  const results = await runOnHosts(
    workers.hosts,
    { args, stdin },
    {
      env: process.env,
      home: process.env.WICK_HOME || dirname(dirname(cli)),
      local: [process.execPath, cli],
      out: (line) => process.stdout.write(`${line}\n`),
    },
  );
  const failed = results.filter((r: HostResult) => r.code !== 0);
  if (failed.length > 0) {
    process.stderr.write(
      `${command} failed on ${failed.length} of ${results.length} hosts: ${failed.map((f) => `${f.host} (exit ${f.code ?? 'killed'})`).join(', ')}\n`,
    );
  }
  return failed.length > 0;
}
