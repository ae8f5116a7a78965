import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { reportPhaseToLauncher, takeLauncherFd } from '../../app/driver/launcherReport.js';
import { parseLocalMaster } from '../../app/local/localMaster.js';
import { LogRouter, logRouterOptions } from '../../client/LogRouter.js';
import { MasterStateMirror } from '../../client/MasterStateMirror.js';
import { withMaster } from '../../client/masterConnection.js';
import { LookupFailed } from '../../client/workerLookup.js';
import { AppConf } from '../../conf/app.js';
import { parseMemoryMB } from '../../conf/daemon.js';
import { loadConf, type ResolvedConf, resolveConf } from '../../conf/load.js';
import { parseInteger } from '../../conf/parse.js';
import { SubmitConf } from '../../conf/submit.js';
import type { WickConf } from '../../conf/WickConf.js';
import type { LocalCluster } from '../../launcher/localClusterProcess.js';
import { bytesOf } from '../../protocol/base64.js';
import { RequestSubmitDriver } from '../../protocol/client.js';
import { RequestLogRange } from '../../protocol/worker.js';
import { withoutSecrets } from '../../rpc/clusterSecret.js';
import type { RpcEndpointRef } from '../../rpc/index.js';
import { parseMasterUrls } from '../../rpc/masterUrls.js';
import { latestRun } from '../../shared/driverRuns.js';
import { type BundledApp, bundleApp } from '../../submit/bundle.js';
import { driverDescription } from '../../submit/driverDescription.js';
import { handOverToDriver, reexecWithoutSecret as reexec } from '../../submit/handOver.js';
import { runAppHere } from '../../submit/runApp.js';
import { uploadToMasters } from '../../submit/uploadApp.js';
import { showErrorStacks } from '../errors.js';
import { addConfOptions, addTokenOption, exitWithParent, masterUrlOf } from '../options.js';
import { showDriverProgress } from './driverProgress.js';
import { kill } from './kill.js';
import { followLog } from './logs.js';
import { printStatus } from './status.js';

interface Flags {
  master?: string;
  deployMode?: string;
  name?: string;
  executorMemory?: string;
  executorCores?: string;
  totalExecutorCores?: string;
  driverMemory?: string;
  driverCores?: string;
  supervise?: boolean;
  files?: string;
  wait?: boolean;
  exitWithParent?: boolean;
  conf: string[];
  propertiesFile?: string;
  verbose?: boolean;
  status?: string;
  kill?: string;
}

/** `wick submit`: spark-submit for Wick applications. */
export function registerSubmit(program: Command): void {
  addTokenOption(
    addConfOptions(
      program
        .command('submit')
        .description('Run an application (.js, .mjs or .ts) on a cluster')
        .argument('[app]', 'the application file')
        .argument('[args...]', 'arguments for the application')
        .option(
          '--master <url>',
          'wick://host:port[,host:port…] (or spark://…); "local" for an embedded local cluster (a master and 2 workers); local[N] or local[*] to run N tasks at once inside the driver, as Spark does (client mode; for debugging tasks) (default wick.master, $WICK_MASTER)',
        )
        .option(
          '--deploy-mode <mode>',
          'client (the driver runs here, the default) or cluster (on a worker)',
        )
        .option('--name <name>', 'application name (default: the file name)')
        .option('--executor-memory <size>', 'memory per executor, e.g. 512m (default 1g)')
        .option('--executor-cores <n>', 'cores per executor (default: all a worker offers)')
        .option('--total-executor-cores <n>', 'cores for the application in all')
        .option('--driver-memory <size>', 'memory for the driver (cluster mode; default 1g)')
        .option('--driver-cores <n>', 'cores for the driver (cluster mode; default 1)')
        .option('--supervise', 'restart the driver when it fails (cluster mode)')
        .option('--wait', 'cluster mode: follow the driver’s output and exit with its status')
        .option(
          '--files <paths>',
          'files to ship to every executor, comma-separated; tasks find them at WickFiles.get(name)',
        ),
    ),
  )
    .option('--verbose', 'print each setting and where it came from; errors with their stack')
    .option('--status <id>', "print a driver's or an application's status (as wick status ID)")
    .option('--kill <id>', 'kill a driver or an application (as wick kill ID)')
    // For launchers (the VS Code agent): the driver ends when whoever started it goes away.
    .addOption(new Option('--exit-with-parent', 'stop when stdin closes').hideHelp())
    .passThroughOptions()
    .action(async (app: string | undefined, args: string[], flags: Flags) => {
      if (flags.verbose) showErrorStacks();
      if (flags.status !== undefined || flags.kill !== undefined) {
        // spark-submit --status / --kill: no application, only the master and its credentials.
        const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
        const url = masterUrlOf(flags.master, conf);
        if (flags.kill !== undefined) await kill(flags.kill, url, conf);
        else await printStatus(flags.status, url, false, conf);
        return;
      }
      if (app === undefined) {
        throw new Error(
          "missing required argument 'app': the application file to run (.js, .mjs or .ts), or --status ID / --kill ID",
        );
      }
      // Read once: each unknown key is warned about once.
      const { conf, origins } = submitConf(flags);
      if (await reexecWithoutSecret(conf)) return;
      takeLauncherFd();
      // SIGTERM, as a kill would: the driver's handlers stop the application cleanly.
      if (flags.exitWithParent)
        exitWithParent(async () => void process.kill(process.pid, 'SIGTERM'), false);
      const master = conf.get(AppConf.master);
      if (!master)
        throw new Error(
          'A master URL must be set: pass --master wick://host:port (or spark://…, or "local"), set wick.master (spark.master) in a properties file, or set WICK_MASTER',
        );
      // Checked here, so that a bad URL fails before anything is bundled or started.
      const inProcess = parseLocalMaster(master) !== undefined;
      const local = master.trim() === 'local';
      if (!local && !inProcess) parseMasterUrls(master);
      const deployMode = conf.get(SubmitConf.deployMode);
      if (inProcess && deployMode !== 'client')
        throw new Error(
          `--master ${master} runs the application inside this process: it takes --deploy-mode client, not "${deployMode}" (for a cluster-mode driver use --master local, an embedded cluster)`,
        );
      const files = conf
        .get(AppConf.files)
        .split(',')
        .map((f) => f.trim())
        .filter((f) => f !== '');
      if (flags.verbose) process.stderr.write(describeSettings(conf, origins));
      const bundled = await bundleApp(app);
      reportPhaseToLauncher('bundled');
      const name = conf.get(AppConf.appName) || undefined;
      let cluster: LocalCluster | undefined;
      let masterUrl = master;
      if (local) {
        process.stderr.write('Starting an embedded local cluster (a master and 2 workers)…\n');
        // Loaded only here: process management is not needed to submit to a running cluster.
        const { startLocalCluster } = await import('../../launcher/localClusterProcess.js');
        cluster = await startLocalCluster({
          workers: 2,
          cores: '1',
          memory: '1g',
          host: '127.0.0.1',
          port: '0',
          webuiPort: '0',
          workDir: join(tmpdir(), `wick-local-${process.pid}`),
          conf: [],
        });
        masterUrl = cluster.url;
        process.stderr.write(`Local cluster ready at ${cluster.url} (logs in ${cluster.logDir})\n`);
        stopClusterWhenDone(cluster);
      }
      // What the application's WickContext reads: every setting resolved here, the master the
      // one it registers with (the local cluster's for "local").
      const appSettings = Object.fromEntries(conf.entries());
      appSettings['wick.master'] = masterUrl;
      if (inProcess) {
        process.stderr.write(
          `Master ${master}: the application's tasks run inside this process (no cluster), so a debugger attached to it stops in the functions given to map, filter, reduceByKey…\n`,
        );
      }
      if (deployMode === 'client') {
        // The files as this machine's paths; in cluster mode they are uploaded to the masters.
        if (files.length > 0) appSettings['wick.files'] = files.map((f) => resolve(f)).join(',');
        // The bundle is only needed while the application runs here.
        process.once('exit', () => rmSync(bundled.root, { recursive: true, force: true }));
        await handOverToDriver(appSettings, inProcess ? undefined : masterUrl);
        await runAppHere({
          bundle: bundled.bundle,
          root: bundled.root,
          source: bundled.source,
          args,
          master: masterUrl,
          appName: name,
          conf: withoutSecrets(appSettings),
        });
        return;
      }
      delete appSettings['wick.files'];
      const status = await submitToCluster(
        masterUrl,
        bundled,
        args,
        files,
        conf,
        appSettings,
        name,
        flags.wait || cluster !== undefined,
      );
      await cluster?.stop();
      process.exitCode = status;
    });
}

/**
 * The submit's settings: its flags over --conf, the properties file(s), the environment and the
 * defaults (loadConf, as every daemon and command). Flags are checked first, so that a bad one is
 * named as the flag the user typed.
 */
function submitConf(flags: Flags): ResolvedConf {
  const check = (flag: string, value: string | undefined, parse: (raw: string) => unknown) => {
    if (value === undefined) return;
    try {
      parse(value);
    } catch (err) {
      throw new Error(`Invalid ${flag} "${value}": ${(err as Error).message}`);
    }
  };
  check('--executor-memory', flags.executorMemory, parseMemoryMB);
  check('--executor-cores', flags.executorCores, (r) => parseInteger(r, 1, 100_000));
  check('--total-executor-cores', flags.totalExecutorCores, (r) => parseInteger(r, 1, 10_000_000));
  check('--driver-memory', flags.driverMemory, parseMemoryMB);
  check('--driver-cores', flags.driverCores, (r) => parseInteger(r, 1, 100_000));
  if (
    flags.deployMode !== undefined &&
    flags.deployMode !== 'client' &&
    flags.deployMode !== 'cluster'
  ) {
    throw new Error(`--deploy-mode must be "client" or "cluster", got "${flags.deployMode}"`);
  }
  return resolveConf({
    confPairs: flags.conf,
    propertiesFile: flags.propertiesFile,
    flags: [
      { flag: '--master', key: 'wick.master', value: flags.master },
      { flag: '--deploy-mode', key: 'wick.submit.deployMode', value: flags.deployMode },
      { flag: '--name', key: 'wick.app.name', value: flags.name },
      { flag: '--executor-memory', key: 'wick.executor.memory', value: flags.executorMemory },
      { flag: '--executor-cores', key: 'wick.executor.cores', value: flags.executorCores },
      { flag: '--total-executor-cores', key: 'wick.cores.max', value: flags.totalExecutorCores },
      { flag: '--driver-memory', key: 'wick.driver.memory', value: flags.driverMemory },
      { flag: '--driver-cores', key: 'wick.driver.cores', value: flags.driverCores },
      {
        flag: '--supervise',
        key: 'wick.driver.supervise',
        value: flags.supervise ? 'true' : undefined,
      },
      { flag: '--files', key: 'wick.files', value: flags.files },
    ],
  });
}

/** The application's and the submit's own settings, shown with their defaults when not set. */
const SHOWN_WITH_DEFAULTS = [
  AppConf.master,
  SubmitConf.deployMode,
  AppConf.appName,
  AppConf.executorMemory,
  AppConf.executorCores,
  AppConf.coresMax,
  SubmitConf.driverMemory,
  SubmitConf.driverCores,
  SubmitConf.driverSupervise,
  AppConf.files,
];

/**
 * `--verbose`: each setting and where it came from (spark-submit's "Spark properties used"),
 * secrets masked; the application's own settings are shown even when they are defaults.
 */
export function describeSettings(conf: WickConf, origins: ReadonlyMap<string, string>): string {
  const keys = new Set<string>([
    ...SHOWN_WITH_DEFAULTS.map((e) => e.key),
    ...conf.entries().map(([k]) => k),
  ]);
  const lines = ['Settings (flags, then --conf, properties files, environment, defaults):'];
  for (const key of [...keys].sort()) {
    const raw = conf.getRaw(key);
    const entry = SHOWN_WITH_DEFAULTS.find((e) => e.key === key);
    const value = raw ?? entry?.defaultText ?? '';
    const shown = isSecretKey(key) && raw !== undefined ? '*********(redacted)' : value;
    lines.push(`  ${key}=${shown}  (${origins.get(key) ?? 'default'})`);
  }
  return `${lines.join('\n')}\n`;
}

function isSecretKey(key: string): boolean {
  return /secret|password|token/i.test(key) && !key.endsWith('.file');
}

/**
 * Once the application has nothing left to do, stop the embedded cluster. Its daemons' pipes must
 * not keep this process alive meanwhile, so they are unref'd; should this process die first, the
 * daemons see their pipes close and stop themselves.
 */
function stopClusterWhenDone(cluster: LocalCluster): void {
  for (const d of cluster.daemons) {
    d.child.unref();
    (d.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    (d.child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  }
  process.once('beforeExit', () => {
    const keep = setInterval(() => {}, 1 << 30);
    void cluster
      .stop()
      .then(async () => {
        // Keep the cluster's work dir (executor logs) only when something went wrong.
        if (!process.exitCode) await rm(dirname(cluster.logDir), { recursive: true, force: true });
        else process.stderr.write(`The local cluster's logs are in ${cluster.logDir}\n`);
      })
      .finally(() => clearInterval(keep));
  });
}

const DRIVER_FINAL_STATES = ['FINISHED', 'FAILED', 'KILLED', 'ERROR'];

/**
 * Follows the driver's stdout. The master places a driver before its worker has created the
 * driver's folder and log, so "No such log" at first only means "not yet": try again shortly,
 * until the driver has ended (then the log is there, or never will be).
 */
async function followDriverLog(
  worker: Parameters<typeof followLog>[0],
  env: Parameters<typeof followLog>[1],
  driverId: string,
  ended: () => boolean,
): Promise<void> {
  for (;;) {
    const wasEnded = ended();
    try {
      await followLog(worker, env, { driverId }, 'stdout', 0);
      return;
    } catch (err) {
      if (wasEnded || !(err as Error).message.startsWith('No such log')) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Where to read the driver's log: its worker, or the master's relay when this machine cannot reach
 * that worker (or wick.ui.reverseProxy is on); none when it ended before it was placed (or its
 * worker went).
 */
async function driverLogRoute(
  state: NonNullable<MasterStateMirror['state']>,
  driverId: string,
  env: Parameters<typeof followLog>[1],
  master: RpcEndpointRef,
  conf: WickConf,
) {
  try {
    const route = await new LogRouter(env, logRouterOptions(conf)).route(
      state,
      { driverId },
      master,
    );
    if (route.via === 'master') {
      process.stderr.write(`Reading the driver's log through the master: ${route.reason}\n`);
    }
    return route.ref;
  } catch (err) {
    if (err instanceof LookupFailed) return undefined;
    throw err;
  }
}

/** How much of a failed driver's stderr `submit --wait` reads, and the most lines it prints. */
const DRIVER_TAIL_BYTES = 16 * 1024;
const DRIVER_TAIL_LINES = 40;

/**
 * The end of a failed driver's stderr: from the last error it printed (`wick: <name>: <message>`
 * and its stack, docs/protocol.md), else its last lines. Empty when it cannot be read: the
 * driver's state still says how it ended.
 */
async function driverErrorTail(from: RpcEndpointRef, driverId: string): Promise<string> {
  let text: string;
  let whole: boolean;
  try {
    const range = await from.ask(
      RequestLogRange({ driverId, stream: 'stderr', length: DRIVER_TAIL_BYTES }),
    );
    text = bytesOf(range, 'data').toString('utf8');
    whole = range.offset === 0;
  } catch (err) {
    process.stderr.write(`Could not read the driver's stderr: ${(err as Error).message}\n`);
    return '';
  }
  const lines = text.trimEnd().split('\n');
  let start = -1;
  for (let i = lines.length - 1; i >= 0 && start < 0; i--)
    if (lines[i]?.startsWith('wick: ')) start = i;
  // Else its last lines; the first one read may be cut.
  const shown =
    start >= 0
      ? lines.slice(start, start + DRIVER_TAIL_LINES)
      : lines.slice(whole ? 0 : 1).slice(-DRIVER_TAIL_LINES);
  if (shown.length === 0) return '';
  return `The end of the driver's stderr:\n${shown.join('\n')}\n`;
}

async function submitToCluster(
  masterUrl: string,
  bundled: BundledApp,
  args: string[],
  files: string[],
  conf: WickConf,
  appSettings: Record<string, string>,
  name: string | undefined,
  wait: boolean,
): Promise<number> {
  // The submitter's own client finds the secret as every Wick process does, --conf included.
  return withMaster(
    masterUrl,
    async (master, env) => {
      const shipped = await uploadToMasters(env, masterUrl, bundled, files, (line) =>
        process.stderr.write(`${line}\n`),
      );
      await rm(bundled.root, { recursive: true, force: true });
      const reply = await master.ask(
        RequestSubmitDriver({
          driverDescription: driverDescription({
            bundled,
            shipped,
            args,
            masterUrl,
            conf: appSettings,
            name,
            memoryMB: conf.get(SubmitConf.driverMemory),
            cores: conf.get(SubmitConf.driverCores),
            supervise: conf.get(SubmitConf.driverSupervise),
          }),
        }),
      );
      if (!reply.success || !reply.driverId)
        throw new Error(`The master refused the driver: ${reply.message}`);
      process.stderr.write(`${reply.message}\n`);
      process.stdout.write(`${reply.driverId}\n`);
      if (!wait) return 0;
      const driverId = reply.driverId;
      const mirror = new MasterStateMirror();
      env.setupEndpoint('SubmitStateMirror', mirror);
      await mirror.subscribe(master);
      // Its latest run: a supervised driver whose worker was lost runs again under a new id.
      const find = (s: NonNullable<MasterStateMirror['state']>) =>
        latestRun([...s.activeDrivers, ...s.completedDrivers], driverId);
      const placed = await mirror.waitFor((s) => {
        const d = find(s);
        return (
          d !== undefined &&
          (d.workerId !== undefined || ['FINISHED', 'FAILED', 'KILLED', 'ERROR'].includes(d.state))
        );
      });
      // The run placed (a relaunch has its own id, and its own log); a later relaunch's log is not
      // followed: its end still is.
      const runId = find(placed)?.id ?? driverId;
      // Its stages as the master hears them from the driver, whichever run it is now.
      const progress = showDriverProgress(
        mirror,
        () => (mirror.state ? find(mirror.state)?.id : undefined),
        conf,
      );
      let worker: RpcEndpointRef | undefined;
      let final: NonNullable<MasterStateMirror['state']>;
      try {
        worker = await driverLogRoute(placed, runId, env, master, conf);
        if (worker) {
          await followDriverLog(worker, env, runId, () => {
            const s = mirror.state;
            return s !== undefined && DRIVER_FINAL_STATES.includes(find(s)?.state ?? '');
          });
        }
        final = await mirror.waitFor((s) =>
          ['FINISHED', 'FAILED', 'KILLED', 'ERROR'].includes(find(s)?.state ?? ''),
        );
      } finally {
        progress.stop();
      }
      const d = find(final);
      const run = d && d.id !== driverId ? ` (relaunched as ${d.id})` : '';
      // As a client-mode driver prints its error: the end of the driver's stderr says what
      // failed, and where in the user's code.
      if (worker && d && d.state !== 'FINISHED') {
        const tail = await driverErrorTail(worker, d.id);
        if (tail) process.stderr.write(tail);
      }
      process.stderr.write(
        `Driver ${driverId}${run} ended ${d?.state}${d?.exception ? `: ${d.exception}` : ''}\n`,
      );
      mirror.unsubscribe(master);
      return d?.state === 'FINISHED' ? 0 : 1;
    },
    conf,
  );
}

/**
 * A client-mode submit given the secret in its environment or command line runs the application
 * in a child started without it (handOver.ts); not for an embedded cluster (`local`), whose
 * daemons this process starts with it, nor for --status/--kill.
 */
async function reexecWithoutSecret(conf: WickConf): Promise<boolean> {
  const master = conf.get(AppConf.master);
  if (!master || master.trim() === 'local') return false;
  if (conf.get(SubmitConf.deployMode) !== 'client') return false;
  const inProcess = parseLocalMaster(master) !== undefined;
  return reexec(Object.fromEntries(conf.entries()), inProcess ? undefined : master);
}
