import { DaemonConf } from '../conf/daemon.js';
import type { WickConf } from '../conf/WickConf.js';
import { MasterWebUI } from '../http/MasterWebUI.js';
import { wickProtocol } from '../protocol/index.js';
import { RpcConf, RpcEnv } from '../rpc/index.js';
import type { Clock } from '../util/clock.js';
import { MasterConf } from './config.js';
import type { LeaderElectionAgentFactory } from './leader/LeaderElectionAgent.js';
import { zooKeeperLeaderAgent } from './leader/ZooKeeperLeaderElectionAgent.js';
import { Master } from './Master.js';
import { FileSystemPersistenceEngine } from './persistence/FileSystemPersistenceEngine.js';
import type { PersistenceEngine } from './persistence/PersistenceEngine.js';
import { ZooKeeperPersistenceEngine } from './persistence/ZooKeeperPersistenceEngine.js';

export interface RunningMaster {
  env: RpcEnv;
  master: Master;
  webUi: MasterWebUI;
  /** wick://host:port */
  url: string;
  stop(): Promise<void>;
}

/** Starts a master: its RpcEnv, its web UI port, its persistence, and the Master endpoint. */
export async function startMaster(conf: WickConf, clock?: Clock): Promise<RunningMaster> {
  const host = conf.get(DaemonConf.masterHost);
  // A daemon has time at start-up: no peer's first message waits for its validator to compile.
  wickProtocol.precompile(() => true);
  const persistence = await persistenceFor(conf);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: Master.SYSTEM_NAME,
    host,
    port: conf.get(DaemonConf.masterPort),
    conf,
    clock,
  }).catch(async (err) => {
    await persistence?.close();
    throw err;
  });
  let webUi: MasterWebUI;
  try {
    const ref = env.endpointRef({ address: env.address, name: Master.ENDPOINT_NAME });
    webUi = await MasterWebUI.start(
      ref,
      host,
      conf.get(DaemonConf.masterUiPort),
      conf.get(RpcConf.portMaxRetries),
      conf,
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
  const master = new Master({
    conf,
    webUiPort: webUi.port,
    webUiUrl: `http://${env.rpcAddress?.host}:${webUi.port}`,
    persistence,
    leaderElection,
    clock,
  });
  env.setupEndpoint(Master.ENDPOINT_NAME, master);
  webUi.attach(env);
  return {
    env,
    master,
    webUi,
    url: `wick://${env.address}`,
    async stop() {
      await webUi.stop();
      await env.stop();
    },
  };
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
