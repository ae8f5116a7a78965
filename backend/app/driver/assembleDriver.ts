import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AppConf } from '../../conf/app.js';
import { executorResourceRequests } from '../../conf/resources.js';
import type { WickConf } from '../../conf/WickConf.js';
import { FileServer } from '../../files/FileServer.js';
import { APP_CODE_ENV, APP_DIR_ENV } from '../../protocol/childEnv.js';
import { FILE_SERVER_ENDPOINT } from '../../protocol/endpoints.js';
import type { AppCode } from '../../protocol/files.js';
import { wickProtocol } from '../../protocol/index.js';
import { type RpcAuth, RpcEnv } from '../../rpc/index.js';
import { sslChildEnv } from '../../rpc/tls/WireSecurity.js';
import { getLogger } from '../../util/log.js';
import { CODE_MANIFEST } from '../../util/shippedCode.js';
import { useShippedCode } from '../closure.js';
import { InProcessExecutors, newLocalApp } from '../local/InProcessExecutors.js';
import { parseLocalMaster } from '../local/localMaster.js';
import { ModuleScopes } from '../moduleScopes.js';
import { AppClient } from './AppClient.js';
import { DriverEndpoint, type ShippedApp } from './DriverEndpoint.js';
import { chooseDriverAddress, routeToMasters } from './driverAddress.js';
import { driverAuth } from './driverAuth.js';
import { LiveListenerBus } from './LiveListenerBus.js';
import { reportToLauncher } from './launcherReport.js';
import { DAGScheduler } from './scheduler/DAGScheduler.js';

/**
 * Where a driver is put together (Spark's SparkContext constructor: createTaskScheduler, the
 * listener bus, the DAGScheduler, the app client): its RpcEnv and file server, the DriverEndpoint
 * its executors talk to, the DAGScheduler over it, the client that registers the application
 * with the masters, and the one listener bus between them. Every event of the driver goes
 * through that bus; this is the only place that says who hears what:
 *
 *   DriverEndpoint ─ WickListenerExecutorAdded ──→ AppClient (tells the master)
 *   DriverEndpoint ─ WickListenerExecutorRemoved → DAGScheduler (forgets its map outputs)
 *   AppClient ────── WickListenerWorkerRemoved ──→ DAGScheduler (forgets its shuffle service's)
 *   DriverEndpoint ─ WickListenerTaskEnd ────────→ the application's listeners (WickContext)
 */

const log = getLogger('WickContext');

/** A driver, registered with a master and ready to run jobs. */
export interface AssembledDriver {
  env: RpcEnv;
  driver: DriverEndpoint;
  /** The masters' client; for local[N], the executors in this process (no master). */
  client: AppClient | InProcessExecutors;
  fileServer: FileServer;
  dagScheduler: DAGScheduler;
  bus: LiveListenerBus;
}

/**
 * Builds a driver for `conf` (wick.master and wick.app.name set and validated) and registers its
 * application with the masters; everything is stopped again if that fails.
 */
export async function assembleDriver(
  conf: WickConf,
  masters: string[],
  appName: string,
): Promise<AssembledDriver> {
  const local = parseLocalMaster(conf.get(AppConf.master));
  const localApp = local ? newLocalApp() : undefined;
  // local[N]: only its own executors, which prove the key made for them, may connect.
  const { auth, appKeys } = localApp
    ? { auth: { credential: undefined, keys: localApp.keys }, appKeys: undefined }
    : driverAuth(conf);
  const env = await createDriverEnv(conf, local ? [] : masters, auth);
  try {
    const bus = new LiveListenerBus();
    const appDir = await applicationDir();
    const shipped = await offerCode(env);
    const driver = new DriverEndpoint(
      conf,
      appDir,
      conf.get(AppConf.maxFailures),
      undefined,
      shipped.app,
      bus,
    );
    const driverRef = env.setupEndpoint(DriverEndpoint.ENDPOINT_NAME, driver);
    const dagScheduler = new DAGScheduler(
      (spec) => driver.runJob(spec),
      conf.get(AppConf.stageMaxConsecutiveAttempts),
      { info: (t) => log.info(t), warn: (t) => log.warn(t) },
      { post: (e) => bus.post(e), now: () => Date.now() },
    );
    bus.on('WickListenerExecutorRemoved', (e) =>
      dagScheduler.executorLost(e.executorId, e.workerLost),
    );
    bus.on('WickListenerWorkerRemoved', (e) => dagScheduler.workerRemoved(e.workerId, e.host));
    if (local && localApp) {
      const executors = new InProcessExecutors(
        localApp,
        local.threads,
        { executorEnded: (id, reason, code) => driver.removeExecutor(id, reason, code) },
        conf.get(AppConf.executorMemory),
      );
      driver.applicationRegistered(executors.appId);
      for (let i = 0; i < local.threads; i++) driver.executorGranted(String(i));
      await executors.start(driverRef.toString());
      reportToLauncher(executors.appId);
      return { env, driver, client: executors, fileServer: shipped.server, dagScheduler, bus };
    }
    const cores = conf.get(AppConf.executorCores);
    const maxCores = conf.get(AppConf.coresMax);
    const executorResources = executorResourceRequests(conf);
    const client = new AppClient(
      masters,
      {
        name: appName,
        user: os.userInfo().username,
        memoryPerExecutorMB: conf.get(AppConf.executorMemory),
        ...(cores > 0 ? { coresPerExecutor: cores } : {}),
        ...(maxCores > 0 ? { maxCores } : {}),
        ...(executorResources.length > 0 ? { resourceReqsPerExecutor: executorResources } : {}),
        command: { argv: [...EXECUTOR_COMMAND], env: sslChildEnv(conf) },
        driverUrl: driverRef.toString(),
      },
      {
        connected: (appId, appKey) => {
          if (appKey) appKeys?.add(appId, appKey);
          driver.applicationRegistered(appId);
        },
        executorAdded: (id) => driver.executorGranted(String(id)),
        executorRemoved: (id, message, exitStatus, workerLost) =>
          driver.removeExecutor(
            String(id),
            message,
            workerLost ? undefined : exitStatus,
            workerLost,
          ),
        executorDecommissioned: (id, message) => driver.decommissionExecutor(String(id), message),
        workerRemoved: (workerId, host, message) =>
          bus.post({ event: 'WickListenerWorkerRemoved', workerId, host, message }),
        dead: (reason) => driver.applicationEnded(reason),
      },
    );
    env.setupEndpoint(AppClient.ENDPOINT_NAME, client);
    bus.on('WickListenerExecutorAdded', (e) => {
      // The master's ids are numbers; an executor that registered under another is not its.
      if (/^\d+$/.test(e.executorId)) client.executorRegistered(Number(e.executorId));
    });
    const keep = setInterval(() => {}, 1 << 30);
    try {
      await client.register(conf.get(AppConf.registrationTimeout));
    } finally {
      clearInterval(keep);
    }
    reportToLauncher(client.appId ?? '');
    return { env, driver, client, fileServer: shipped.server, dagScheduler, bus };
  } catch (err) {
    await env.stop();
    throw err;
  }
}

/** What a worker runs for each executor of the application: Wick's own executor. */
const EXECUTOR_COMMAND = [
  '{{WICK_NODE}}',
  '{{WICK_CLI}}',
  'executor',
  '--driver-url',
  '{{DRIVER_URL}}',
  '--executor-id',
  '{{EXECUTOR_ID}}',
  '--hostname',
  '{{HOSTNAME}}',
  '--cores',
  '{{CORES}}',
  '--memory',
  '{{MEMORY}}',
  '--app-id',
  '{{APP_ID}}',
  '--worker-url',
  '{{WORKER_URL}}',
];

/** The driver's RpcEnv, on an address its executors can reach (see driverAddress.ts). */
async function createDriverEnv(conf: WickConf, masters: string[], auth: RpcAuth): Promise<RpcEnv> {
  const settings = {
    host: conf.get(AppConf.driverHost),
    bindAddress: conf.get(AppConf.driverBindAddress),
  };
  const address = chooseDriverAddress(
    settings,
    settings.host || masters.length === 0 ? undefined : await routeToMasters(masters),
  );
  log.info(`Driver address ${address.advertise} (${address.reason}), listening on ${address.bind}`);
  try {
    return await RpcEnv.create({
      protocol: wickProtocol,
      name: 'wickDriver',
      host: address.bind,
      advertiseHost: address.advertise,
      port: conf.get(AppConf.driverPort),
      conf,
      unref: true,
      auth,
    });
  } catch (err) {
    if (!/EADDRNOTAVAIL/.test(String(err)) || settings.bindAddress) throw err;
    throw new Error(
      `The driver cannot listen on ${address.bind} (wick.driver.host): it is not an address of this machine. Behind NAT or a tunnel, set wick.driver.bindAddress to one that is (e.g. 0.0.0.0)`,
      { cause: err },
    );
  }
}

/**
 * The driver's file server, offering the application's code tree when it runs from one
 * (WICK_APP_CODE, set by wick submit) and the files it adds; shipped functions then resolve the
 * names their modules give what they import (ModuleScopes).
 */
async function offerCode(env: RpcEnv): Promise<{ server: FileServer; app: ShippedApp }> {
  const server = new FileServer();
  env.setupEndpoint(FILE_SERVER_ENDPOINT, server);
  const root = process.env[APP_CODE_ENV];
  if (!root) {
    useShippedCode(undefined);
    return { server, app: { files: [] } };
  }
  const code = JSON.parse(await readFile(join(root, CODE_MANIFEST), 'utf8')) as AppCode;
  for (const f of code.files) server.offer(f.sha256, join(root, ...f.path.split('/')));
  useShippedCode(new ModuleScopes(root, code.entry));
  return { server, app: { code, files: [] } };
}

/** Where the application's modules resolve from on executors: its main file's folder. */
async function applicationDir(): Promise<string> {
  const dir = process.env[APP_DIR_ENV];
  if (dir) return dir;
  const main = process.argv[1];
  return main ? dirname(resolve(main)) : process.cwd();
}
