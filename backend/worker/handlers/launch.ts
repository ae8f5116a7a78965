import type {
  KillDriver,
  KillExecutor,
  LaunchDriver,
  LaunchExecutor,
} from '../../protocol/deploy.js';
import type { MessageOf, WireMessage } from '../../protocol/registry.js';
import { WorkerStateResponse } from '../../protocol/worker.js';
import { getLogger } from '../../util/log.js';
import { DriverRunner } from '../DriverRunner.js';
import { ExecutorRunner } from '../ExecutorRunner.js';
import type { Worker } from '../Worker.js';

/** Master → Worker: launching and killing executors and drivers; the worker's state. */

const log = getLogger('Worker');

export async function receive(w: Worker, msg: WireMessage): Promise<boolean> {
  switch (msg.type) {
    case 'LaunchExecutor':
      await launchExecutor(w, msg as MessageOf<typeof LaunchExecutor>);
      return true;
    case 'KillExecutor': {
      const m = msg as MessageOf<typeof KillExecutor>;
      if (m.masterUrl !== w.activeMasterUrl) {
        log.warn(
          `Invalid Master (${m.masterUrl}) attempted to kill executor ${m.appId}/${m.execId}`,
        );
        return true;
      }
      const runner = w.executors.get(`${m.appId}/${m.execId}`);
      if (!runner) {
        log.info(`Asked to kill unknown executor ${m.appId}/${m.execId}`);
        return true;
      }
      log.info(`Asked to kill executor ${runner.fullId}`);
      void runner.kill();
      return true;
    }
    case 'LaunchDriver': {
      const m = msg as MessageOf<typeof LaunchDriver>;
      log.info(`Asked to launch driver ${m.driverId}`);
      const runner = new DriverRunner(m.driverId, m.driverDesc, w, w.workDir, w.clock, (r) =>
        w.driverFinished(r),
      );
      w.drivers.set(m.driverId, runner);
      w.coresUsed += m.driverDesc.cores;
      w.memoryUsed += m.driverDesc.mem;
      void runner.run();
      return true;
    }
    case 'KillDriver': {
      const { driverId } = msg as MessageOf<typeof KillDriver>;
      log.info(`Asked to kill driver ${driverId}`);
      const runner = w.drivers.get(driverId);
      if (runner) void runner.kill();
      else log.info(`Asked to kill unknown driver ${driverId}`);
      return true;
    }
    default:
      return false;
  }
}

export function reply(w: Worker, msg: WireMessage): WireMessage | undefined {
  if (msg.type !== 'RequestWorkerState') return undefined;
  const exec = (r: ExecutorRunner) => ({
    appId: r.appId,
    execId: r.execId,
    cores: r.cores,
    memory: r.memory,
    state: r.state,
    ...(r.pid !== undefined && r.pid > 0 ? { pid: r.pid } : {}),
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    ...(r.message !== undefined ? { message: r.message } : {}),
    dir: r.dir,
  });
  const driver = (r: DriverRunner) => ({
    driverId: r.driverId,
    cores: r.desc.cores,
    memory: r.desc.mem,
    state: r.state,
    ...(r.pid !== undefined && r.pid > 0 ? { pid: r.pid } : {}),
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    ...(r.exception !== undefined ? { message: r.exception } : {}),
    dir: r.dir,
  });
  const addr = w.rpcEnv.rpcAddress;
  return WorkerStateResponse({
    host: addr?.host ?? '',
    port: addr?.port ?? 0,
    workerId: w.workerId,
    masterUrl: w.activeMasterUrl,
    masterWebUiUrl: w.activeMasterWebUiUrl,
    cores: w.cores,
    memory: w.memory,
    coresUsed: w.coresUsed,
    memoryUsed: w.memoryUsed,
    workDir: w.workDir,
    executors: [...w.executors.values()].map(exec),
    finishedExecutors: [...w.finishedExecutors.values()].map(exec),
    drivers: [...w.drivers.values()].map(driver),
    finishedDrivers: [...w.finishedDrivers.values()].map(driver),
  });
}

async function launchExecutor(w: Worker, m: MessageOf<typeof LaunchExecutor>): Promise<void> {
  if (m.masterUrl !== w.activeMasterUrl) {
    log.warn(`Invalid Master (${m.masterUrl}) attempted to launch executor.`);
    return;
  }
  log.info(`Asked to launch executor ${m.appId}/${m.execId} for ${m.appDesc.name}`);
  const fullId = `${m.appId}/${m.execId}`;
  if (w.executors.has(fullId)) {
    log.warn(`Executor ${fullId} is already running here; ignoring the second launch`);
    return;
  }
  let dirs: string[];
  try {
    dirs = await w.appLocalDirs(m.appId);
  } catch (err) {
    log.error(`Failed to create local dirs for ${m.appId}`, err);
    w.sendToMaster({
      type: 'ExecutorStateChanged',
      appId: m.appId,
      execId: m.execId,
      state: 'FAILED',
      message: `Failed to create local dirs: ${(err as Error).message}`,
    });
    return;
  }
  const runner = new ExecutorRunner(
    m.appId,
    m.execId,
    m.appDesc,
    m.cores,
    m.memory,
    w,
    w.workDir,
    dirs,
    (r) => w.executorStateChanged(r),
  );
  w.executors.set(fullId, runner);
  w.coresUsed += m.cores;
  w.memoryUsed += m.memory;
  await runner.start();
}
