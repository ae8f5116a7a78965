/**
 * `wick start-master`, `wick start-worker`, `wick start-history-server` and their `wick stop-*`:
 * Spark's sbin/start-master.sh, start-worker.sh, start-history-server.sh and stop-*.sh, over one
 * launcher (backend/launcher/daemon/, Spark's spark-daemon.sh). The daemons are `wick master`,
 * `wick worker` and `wick history-server` run in the background with a pid file and a log file.
 */
import { readdirSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { DaemonConf } from '../../conf/daemon.js';
import { DaemonLauncherConf } from '../../conf/daemonLauncher.js';
import { loadConf } from '../../conf/load.js';
import type { WickConf } from '../../conf/WickConf.js';
import { WorkerConf } from '../../conf/worker.js';
import {
  type DaemonDirs,
  type DaemonKind,
  daemonDirs,
  instancesWithPidFiles,
} from '../../launcher/daemon/daemonFiles.js';
import { DaemonStartError, startDaemon } from '../../launcher/daemon/startDaemon.js';
import { stopDaemon } from '../../launcher/daemon/stopDaemon.js';
import {
  instancePort,
  withoutInstances,
  workerInstances,
} from '../../launcher/daemon/workerInstances.js';
import { parseMasterUrls } from '../../rpc/masterUrls.js';
import { ensureSecretBeforeMaster, secretToHandOn } from '../daemonSecret.js';
import { addConfOptions } from '../options.js';

interface StartFlags {
  host?: string;
  port?: string;
  webuiPort?: string;
  conf: string[];
  propertiesFile?: string;
  secretStdin?: boolean;
}

interface WorkerStartFlags extends StartFlags {
  cores?: string;
  memory?: string;
  workDir?: string;
  instances?: string;
}

export function registerDaemonControl(program: Command): void {
  startOptions(
    program
      .command('start-master')
      .description(
        'Start a master in the background, with a pid file and a log (Spark’s start-master.sh)',
      )
      .option('--host <host>', 'address to bind and advertise (default: this machine’s name)')
      .option('--port <port>', 'RPC port (default 7077)')
      .option('--webui-port <port>', 'web UI port (default 8080)'),
  ).action(async (flags: StartFlags) => {
    const settings = [
      { flag: '--host', key: 'wick.master.host', value: flags.host },
      { flag: '--port', key: 'wick.master.port', value: flags.port },
      { flag: '--webui-port', key: 'wick.master.ui.port', value: flags.webuiPort },
    ];
    const { env, conf } = startConf(flags, settings);
    const secret = await secretToHandOn(flags.secretStdin);
    ensureSecretBeforeMaster(conf, secret);
    const ok = await startOne('master', 1, passedOn(flags, settings), conf, env, secret);
    if (!ok) process.exitCode = 1;
  });

  startOptions(
    program
      .command('start-worker')
      .description(
        'Start worker(s) in the background, with pid files and logs (Spark’s start-worker.sh)',
      )
      .argument('<master-url>', 'wick://host:port, or several: wick://h1:7077,h2:7077')
      .option(
        '--instances <n>',
        'workers to start on this machine, ports counted up from the base ports (default $WICK_WORKER_INSTANCES or $SPARK_WORKER_INSTANCES, else 1)',
      )
      .option('--host <host>', 'address to bind and advertise (default: this machine’s name)')
      .option('--port <port>', 'RPC port of the first worker (default 0: a free one)')
      .option('--webui-port <port>', 'web UI port of the first worker (default 8081)')
      .option('-c, --cores <n>', 'cores each worker offers (default: all)')
      .option('-m, --memory <size>', 'memory each worker offers, e.g. 2g')
      .option('-d, --work-dir <dir>', 'where executors and drivers run (default ./work)'),
  ).action(async (masterUrl: string, flags: WorkerStartFlags) => {
    parseMasterUrls(masterUrl);
    const instances = workerInstances(flags.instances, process.env);
    // The ports are each instance's own (counted up from these); the rest is passed on as given.
    const ports = [
      { flag: '--port', key: 'wick.worker.port', value: flags.port },
      { flag: '--webui-port', key: 'wick.worker.ui.port', value: flags.webuiPort },
    ];
    const shared = [
      { flag: '--host', key: 'wick.worker.host', value: flags.host },
      { flag: '--cores', key: 'wick.worker.cores', value: flags.cores },
      { flag: '--memory', key: 'wick.worker.memory', value: flags.memory },
      { flag: '--work-dir', key: 'wick.worker.dir', value: flags.workDir },
    ];
    const { env, conf } = startConf(flags, [...ports, ...shared]);
    if (instances > 1 && conf.get(WorkerConf.shuffleServiceEnabled)) {
      // Spark's SPARK-20989: one external shuffle service per machine, on one port.
      throw new Error(
        `${instances} workers cannot each run the external shuffle service (wick.shuffle.service.enabled) on one port: start 1 worker, or set wick.shuffle.service.enabled=false`,
      );
    }
    const secret = await secretToHandOn(flags.secretStdin);
    const basePort = conf.get(DaemonConf.workerPort);
    const baseUi = conf.get(DaemonConf.workerUiPort);
    const common = [masterUrl, ...passedOn(flags, shared)];
    let failed = 0;
    for (let i = 1; i <= instances; i++) {
      const own = [
        '--port',
        String(instancePort(basePort, i)),
        '--webui-port',
        String(instancePort(baseUi, i)),
      ];
      if (!(await startOne('worker', i, [...common, ...own], conf, env, secret))) failed++;
    }
    if (failed > 0) process.exitCode = 1;
  });

  startOptions(
    program
      .command('start-history-server')
      .description(
        'Start a history server in the background, with a pid file and a log (Spark’s start-history-server.sh)',
      )
      .option(
        '--host <host>',
        'address to bind (default wick.history.ui.host, else this machine’s name)',
      )
      .option('--port <port>', 'port (default wick.history.ui.port, 18080)')
      .option('--dir <dir>', 'the event log folder (default wick.history.fs.logDirectory)'),
  ).action(async (flags: StartFlags & { dir?: string }) => {
    const settings = [
      { flag: '--host', key: 'wick.history.ui.host', value: flags.host },
      { flag: '--port', key: 'wick.history.ui.port', value: flags.port },
      { flag: '--dir', key: 'wick.history.fs.logDirectory', value: flags.dir },
    ];
    // Read here as the daemon will read it, so that a bad setting fails before anything starts.
    const { env, conf } = startConf(flags, settings);
    const secret = await secretToHandOn(flags.secretStdin);
    const ok = await startOne('history-server', 1, passedOn(flags, settings), conf, env, secret);
    if (!ok) process.exitCode = 1;
  });

  stopCommand(
    program,
    'master',
    'Stop the master started by wick start-master (Spark’s stop-master.sh)',
  );
  stopCommand(
    program,
    'history-server',
    'Stop the history server started by wick start-history-server (Spark’s stop-history-server.sh)',
  );
  stopCommand(
    program,
    'worker',
    'Stop every worker started by wick start-worker on this machine (Spark’s stop-worker.sh)',
  );
}

function startOptions(cmd: Command): Command {
  return addConfOptions(cmd).addOption(
    new Option(
      '--secret-stdin',
      'read the cluster secret from the first line of stdin and hand it to the daemon by a pipe (what wick start-all does over ssh), instead of WICK_AUTH_SECRET',
    ),
  );
}

function stopCommand(program: Command, kind: DaemonKind, description: string): void {
  addConfOptions(program.command(`stop-${kind}`).description(description)).action(
    async (flags: { conf: string[]; propertiesFile?: string }) => {
      const conf = loadConf({
        confPairs: flags.conf,
        propertiesFile: flags.propertiesFile,
        env: withoutInstances(process.env),
      });
      const dirs = daemonDirs();
      const found = instancesWithPidFiles(dirs, kind, (d) => safeList(d));
      const instances = kind !== 'worker' || found.length === 0 ? [1] : found;
      for (const i of instances) await stopOne(dirs, kind, i, conf);
    },
  );
}

async function startOne(
  kind: DaemonKind,
  instance: number,
  args: string[],
  conf: WickConf,
  env: NodeJS.ProcessEnv,
  secret: string | undefined,
): Promise<boolean> {
  try {
    const started = await startDaemon({
      kind,
      instance,
      args,
      dirs: daemonDirs(),
      env,
      secret,
      startTimeoutMs: conf.get(DaemonLauncherConf.startTimeout),
      note: (line) => process.stdout.write(`${line}\n`),
    });
    const r = started.ready;
    const where =
      kind === 'master'
        ? `at ${String(r.url)}, web UI ${String(r.webUiUrl)}`
        : kind === 'history-server'
          ? `at ${String(r.url)}, reading ${String(r.logDir)}`
          : `as ${String(r.workerId)}, web UI ${String(r.webUiUrl)}`;
    process.stdout.write(
      `started ${started.files.label} (process ${started.pid}) ${where}, logging to ${started.files.logFile}\n`,
    );
    return true;
  } catch (err) {
    if (!(err instanceof DaemonStartError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return false;
  }
}

async function stopOne(
  dirs: DaemonDirs,
  kind: DaemonKind,
  instance: number,
  conf: WickConf,
): Promise<void> {
  const label = instance === 1 ? kind : `${kind} ${instance}`;
  const outcome = await stopDaemon(dirs, kind, instance, conf.get(DaemonLauncherConf.stopTimeout));
  if (outcome.kind === 'none') process.stdout.write(`no ${label} to stop\n`);
  else if (outcome.kind === 'stale')
    process.stdout.write(
      `no ${label} to stop (removed the stale pid file of process ${outcome.pid})\n`,
    );
  else
    process.stdout.write(
      `stopped ${label} (process ${outcome.pid}${outcome.killed ? ', killed with SIGKILL after wick.daemon.stopTimeout' : ''})\n`,
    );
}

/** A start command's flag that is a setting: read here (as the daemon will) and passed on. */
interface FlagSetting {
  flag: string;
  key: string;
  value: string | undefined;
}

/** The daemon's settings as it will read them, so that a bad one fails before anything starts. */
function startConf(
  flags: StartFlags,
  settings: FlagSetting[],
): { env: NodeJS.ProcessEnv; conf: WickConf } {
  const env = withoutInstances(process.env);
  const conf = loadConf({
    confPairs: flags.conf,
    propertiesFile: flags.propertiesFile,
    env,
    flags: settings,
  });
  return { env, conf };
}

/** The daemon's arguments: the flags given, then every --conf and the properties file. */
function passedOn(flags: StartFlags, settings: FlagSetting[]): string[] {
  return [
    ...settings.flatMap((s) => passOn(s.flag, s.value)),
    ...flags.conf.flatMap((c) => ['--conf', c]),
    ...passOn('--properties-file', flags.propertiesFile),
  ];
}

function passOn(flag: string, value: string | undefined): string[] {
  return value === undefined ? [] : [flag, value];
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
