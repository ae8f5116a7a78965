/**
 * The master's operations on their own, as handlers, the recovery and the timers call them: an
 * OperationsContext over real tables and a real StateBroadcaster, with mock peers each in a real
 * RpcEnv on port 0 (a worker, an application's driver) and a real subscriber whose copy of the
 * state is built only from the events it receives, as every client's is.
 */
import type { TestContext } from 'node:test';
import { DEFAULT_RETENTION } from '../../../backend/appstatus/AppStatusStore.js';
import { WickConf } from '../../../backend/conf/WickConf.js';
import { ApplicationInfo } from '../../../backend/master/ApplicationInfo.js';
import { MasterAppStatus } from '../../../backend/master/appStatus/MasterAppStatus.js';
import { ClusterState } from '../../../backend/master/ClusterState.js';
import type { OperationsContext } from '../../../backend/master/operations/context.js';
import { BlackHolePersistenceEngine } from '../../../backend/master/persistence/PersistenceEngine.js';
import { StateBroadcaster } from '../../../backend/master/StateBroadcaster.js';
import { WorkerInfo } from '../../../backend/master/WorkerInfo.js';
import type { DriverDescription } from '../../../backend/protocol/common.js';
import type { MessageOf } from '../../../backend/protocol/registry.js';
import type { MasterStateEvent, MasterStateResponse } from '../../../backend/protocol/state.js';
import { applyEvent } from '../../../backend/shared/applyEvent.js';
import { systemClock } from '../../../backend/util/clock.js';
import { appDescription } from '../../helpers/masterMocks.js';
import { Recorder, serverEnv } from '../../helpers/recorder.js';

type State = MessageOf<typeof MasterStateResponse>;

/** A peer: a Recorder endpoint in its own RpcEnv. */
async function peer(t: TestContext, name: string) {
  const env = await serverEnv(t, name);
  const recorder = new Recorder();
  env.setupEndpoint(name, recorder);
  return { env, recorder, address: env.address, name };
}

export async function operations(t: TestContext, conf: Record<string, string> = {}) {
  const master = await serverEnv(t, 'wickMaster');
  const broadcaster = new StateBroadcaster();
  const cluster = new ClusterState({
    retainedApplications: 10,
    retainedDrivers: 10,
    listener: broadcaster,
  });
  const ops: OperationsContext = {
    cluster,
    persistence: new BlackHolePersistenceEngine(),
    conf: new WickConf(conf),
    clock: systemClock,
    random: () => 0,
    files: undefined,
    status: 'ALIVE',
    masterUrl: `wick://${master.address}`,
    workerTimeoutMs: 60_000,
    appStatus: new MasterAppStatus({
      retention: DEFAULT_RETENTION,
      retainedApplications: 10,
      eventLogDir: undefined,
    }),
  };
  const subscriber = await peer(t, 'Mirror');
  broadcaster.subscribe(master.endpointRef({ address: subscriber.address, name: 'Mirror' }));
  // What the subscriber knows: the events it got, applied to an empty state.
  const mirror: State = {
    type: 'MasterStateResponse',
    url: ops.masterUrl,
    webUiUrl: 'http://127.0.0.1:0',
    status: 'ALIVE',
    seq: 0,
    workers: [],
    activeApps: [],
    completedApps: [],
    activeDrivers: [],
    completedDrivers: [],
  };
  let applied = 0;
  const seen = () => {
    for (const e of subscriber.recorder.all('MasterStateEvent', applied)) {
      applyEvent(mirror, e as unknown as MessageOf<typeof MasterStateEvent>);
    }
    applied = subscriber.recorder.received.length;
    return mirror;
  };
  /** Waits until the subscriber's copy of the state satisfies `done`. */
  const told = async (done: (s: State) => boolean): Promise<State> => {
    for (;;) {
      if (done(seen())) return mirror;
      await subscriber.recorder.next('MasterStateEvent', () => true, applied);
    }
  };

  let port = 0;
  /** A mock worker, registered through the operations' tables (not yet added: see addWorker). */
  const worker = async (cores = 4, memory = 4096) => {
    const p = await peer(t, 'Worker');
    const ref = master.endpointRef({ address: p.address, name: 'Worker' });
    const info = new WorkerInfo(
      `worker-${++port}`,
      '127.0.0.1',
      Number(p.address.split(':')[1]),
      cores,
      memory,
      ref,
      '',
      systemClock.now(),
    );
    return { ...p, info };
  };
  /** A mock application's driver, and its ApplicationInfo (not yet added). */
  const app = async (maxCores = 2) => {
    const p = await peer(t, 'AppClient');
    const ref = master.endpointRef({ address: p.address, name: 'AppClient' });
    const now = systemClock.now();
    const info = new ApplicationInfo(
      cluster.nextAppId(now),
      appDescription({ maxCores, coresPerExecutor: 1 }),
      ref,
      now,
      8,
    );
    return { ...p, info };
  };
  const driverDesc = (supervise: boolean): DriverDescription => ({
    appPath: '/x.js',
    mem: 128,
    cores: 1,
    supervise,
    command: { argv: ['node', '/x.js'], env: {} },
  });
  return { ops, cluster, master, told, worker, app, driverDesc };
}
