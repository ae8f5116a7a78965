import os from 'node:os';
import { dirname, join } from 'node:path';
import type { AppStatusSource } from '../appstatus/AppStatusSource.js';
import { DaemonConf } from '../conf/daemon.js';
import { MasterConf } from '../conf/master.js';
import { ReverseProxyConf } from '../conf/reverseProxy.js';
import type { WickConf } from '../conf/WickConf.js';
import { ContentStore } from '../files/ContentStore.js';
import { FileServer } from '../files/FileServer.js';
import { FILE_SERVER_ENDPOINT, LOG_RELAY_ENDPOINT } from '../protocol/endpoints.js';
import { wickProtocol } from '../protocol/index.js';
import {
  defaultSecretFile,
  ensureClusterSecret,
  resolveClusterAuth,
} from '../rpc/clusterSecret.js';
import {
  clusterRpcAuth,
  isClusterPeer,
  RpcConf,
  type RpcEndpointRef,
  RpcEnv,
} from '../rpc/index.js';
import { masterSecurity } from '../rpc/tls/masterSecurity.js';
import type { WireSecurity } from '../rpc/tls/WireSecurity.js';
import { type Clock, systemClock } from '../util/clock.js';
import { announceAuth } from './announceAuth.js';
import type { LeaderElectionAgentFactory } from './leader/LeaderElectionAgent.js';
import { zooKeeperLeaderAgent } from './leader/ZooKeeperLeaderElectionAgent.js';
import { LogRelay } from './logRelay/LogRelay.js';
import { locateLogWorker } from './logRelay/locate.js';
import { Master, type MasterOptions } from './Master.js';
import { FileSystemPersistenceEngine } from './persistence/FileSystemPersistenceEngine.js';
import type { PersistenceEngine } from './persistence/PersistenceEngine.js';
import { ZooKeeperPersistenceEngine } from './persistence/ZooKeeperPersistenceEngine.js';
import { TokenAccess } from './tokens/TokenAccess.js';
import { TokenStore } from './tokens/TokenStore.js';

/** The master's web UI, as startMaster runs it (backend/http's MasterWebUI). */
export interface MasterWebUiServer {
  readonly port: number;
  /** `https` when it serves TLS. */
  readonly scheme?: 'http' | 'https';
  /**
   * Joins the master's RpcEnv once the Master endpoint is set up; `appStatus` is what its
   * /api/v1 reads (the Master's stores, in this process).
   */
  attach(env: RpcEnv, appStatus?: AppStatusSource): void;
  /** Its /api/v1 answered in this process (the master's RequestAppStatusApi). */
  apiV1?(path: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

/**
 * Starts the web UI on `port` (0: a free one; taken: the next, up to maxRetries times), talking to
 * the Master through `master`. Given by the caller: the web UI imports the master, not the other
 * way round (MasterWebUI.start is one).
 */
export type MasterWebUiStarter = (
  master: RpcEndpointRef,
  host: string,
  port: number,
  maxRetries: number,
  conf: WickConf,
  /** The master's TLS, so that its web UI serves the cluster's certificate too. */
  security?: WireSecurity,
) => Promise<MasterWebUiServer>;

export interface StartMasterOptions {
  webUi: MasterWebUiStarter;
  clock?: Clock;
  /** Where its applications log, and how ids are claimed there (MasterOptions.eventLogs). */
  eventLogs?: MasterOptions['eventLogs'];
}

export interface RunningMaster {
  env: RpcEnv;
  master: Master;
  webUi: MasterWebUiServer;
  /** wick://host:port */
  url: string;
  /** The master's TLS, for another port of the master to serve the cluster's certificate too. */
  security: WireSecurity;
  stop(): Promise<void>;
}

/** Starts a master: its RpcEnv, its web UI port, its persistence, and the Master endpoint. */
export async function startMaster(
  conf: WickConf,
  { webUi: startWebUi, clock, eventLogs }: StartMasterOptions,
): Promise<RunningMaster> {
  const host = conf.get(DaemonConf.masterHost);
  // A daemon has time at start-up: no peer's first message waits for its validator to compile.
  wickProtocol.precompile(() => true);
  // Secure by default: a master without a secret makes one before it listens.
  const found = ensureClusterSecret(resolveClusterAuth(conf));
  const security = await masterSecurity(conf, host);
  const persistence = await persistenceFor(conf);
  const tokens =
    found.mode === 'secret'
      ? new TokenAccess(
          new TokenStore(tokensFileFor(conf), found.secret),
          found.secret,
          clock ?? systemClock,
        )
      : undefined;
  // With recovery, tokens live in the recovery store beside the applications, which every master
  // that may lead shares (ZooKeeper) or reads on restart (FILESYSTEM): a failover keeps them.
  if (tokens && persistence) tokens.store.keepIn(persistence);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: Master.SYSTEM_NAME,
    host,
    port: conf.get(DaemonConf.masterPort),
    conf,
    clock,
    auth: tokens
      ? {
          ...clusterRpcAuth(found.mode === 'secret' ? found.secret : undefined),
          keys: tokens.keyRing(),
        }
      : clusterRpcAuth(found.mode === 'secret' ? found.secret : undefined),
    security,
  }).catch(async (err) => {
    await persistence?.close();
    throw err;
  });
  announceAuth(
    found,
    env.address,
    conf.get(MasterConf.recoveryMode) === 'ZOOKEEPER',
    security.fingerprint,
  );
  let webUi: MasterWebUiServer;
  try {
    const ref = env.endpointRef({ address: env.address, name: Master.ENDPOINT_NAME });
    webUi = await startWebUi(
      ref,
      host,
      conf.get(DaemonConf.masterUiPort),
      conf.get(RpcConf.portMaxRetries),
      conf,
      security,
    );
  } catch (err) {
    await env.stop();
    await persistence?.close();
    throw err;
  }
  let leaderElection: LeaderElectionAgentFactory | undefined;
  if (conf.get(MasterConf.recoveryMode) === 'ZOOKEEPER') {
    leaderElection = zooKeeperLeaderAgent({
      url: conf.get(MasterConf.zookeeperUrl),
      dir: conf.get(MasterConf.zookeeperDir),
      sessionTimeoutMs: conf.get(MasterConf.zookeeperSessionTimeout),
      label: () => `wick://${env.address}`,
    });
  }
  const files = new ContentStore(
    filesDirFor(conf, env.rpcAddress?.port ?? 0),
    conf.get(MasterConf.uploadMaxSize),
    conf.get(MasterConf.uploadMaxTotalSize),
  );
  env.setupEndpoint(FILE_SERVER_ENDPOINT, new FileServer(files, isClusterPeer));
  const master = new Master({
    files,
    conf,
    webUiPort: webUi.port,
    webUiUrl: `${webUi.scheme ?? 'http'}://${env.rpcAddress?.host}:${webUi.port}`,
    persistence,
    leaderElection,
    clock,
    ...(tokens ? { tokens } : {}),
    eventLogs,
  });
  env.setupEndpoint(Master.ENDPOINT_NAME, master);
  env.setupEndpoint(
    LOG_RELAY_ENDPOINT,
    new LogRelay({
      locate: (source) => locateLogWorker(master.clusterView, source),
      authorize: (sender, source) => tokens?.checkLog(sender, source, master.ownedApps()),
      maxFollowsPerClient: conf.get(ReverseProxyConf.maxFollowsPerClient),
      maxTotalBacklog: conf.get(ReverseProxyConf.maxTotalBacklog),
    }),
  );
  webUi.attach(env, master.appStatus);
  master.answerApiV1 = webUi.apiV1?.bind(webUi);
  return {
    env,
    master,
    webUi,
    url: `wick://${env.address}`,
    security,
    async stop() {
      await webUi.stop();
      await env.stop();
    },
  };
}

/**
 * This master's file of users' tokens and of who submitted what: in the recovery directory with
 * FILESYSTEM recovery, else beside the default secret file (tokens are derived from the secret,
 * and live and die with it). With recovery the tokens themselves are kept in the recovery store
 * too (`token_<id>` records), which a master elected leader takes as they are (TokenStore
 * .adoptShared); an application's and a driver's owner are in their own records.
 */
function tokensFileFor(conf: WickConf): string {
  if (conf.get(MasterConf.recoveryMode) === 'FILESYSTEM')
    return join(conf.get(MasterConf.recoveryDirectory), 'tokens.json');
  return join(dirname(defaultSecretFile()), 'tokens.json');
}

/** See wick.master.filesDir. */
function filesDirFor(conf: WickConf, port: number): string {
  const set = conf.get(MasterConf.filesDir);
  if (set) return set;
  if (conf.get(MasterConf.recoveryMode) === 'FILESYSTEM')
    return join(conf.get(MasterConf.recoveryDirectory), 'files');
  const cache = process.env.XDG_CACHE_HOME || join(os.homedir(), '.cache');
  return join(cache, 'wick', 'master-files', String(port));
}

async function persistenceFor(conf: WickConf): Promise<PersistenceEngine | undefined> {
  const mode = conf.get(MasterConf.recoveryMode);
  if (mode === 'FILESYSTEM')
    return FileSystemPersistenceEngine.open(conf.get(MasterConf.recoveryDirectory));
  if (mode === 'ZOOKEEPER') {
    return ZooKeeperPersistenceEngine.open(
      conf.get(MasterConf.zookeeperUrl),
      conf.get(MasterConf.zookeeperDir),
      conf.get(MasterConf.zookeeperSessionTimeout),
    );
  }
  return undefined;
}
