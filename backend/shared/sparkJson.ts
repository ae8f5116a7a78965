import type { MessageOf } from '../protocol/registry.js';
import type {
  AppSummary,
  DriverSummary,
  MasterStateResponse,
  WorkerSummary,
} from '../protocol/state.js';
import { javaDateString } from './javaDate.js';

/**
 * Custom resources (GPUs and the like) are not built yet: every `resources*` field is what Spark
 * writes for a cluster without any — an empty object per worker, executor or driver (Spark's
 * writeResourcesInfo of an empty map), an empty list of requirements per application.
 */
const NO_RESOURCES = (): Record<string, never> => ({});

/**
 * The Master's state in the shape of Spark's master `/json`, so that tools written for Spark's
 * master page read Wick's too. Sizes are MiB and times ms since the epoch, as in Spark.
 */
export function sparkMasterJson(
  state: MessageOf<typeof MasterStateResponse>,
  now = Date.now(),
): Record<string, unknown> {
  const alive = state.workers.filter((w) => w.state === 'ALIVE');
  const sum = (f: (w: WorkerSummary) => number) => alive.reduce((s, w) => s + f(w), 0);
  return {
    url: state.url,
    workers: state.workers.map(sparkWorkerJson),
    aliveworkers: alive.length,
    cores: sum((w) => w.cores),
    coresused: sum((w) => w.coresUsed),
    memory: sum((w) => w.memory),
    memoryused: sum((w) => w.memoryUsed),
    // One object per alive worker, as Spark lists each worker's resources.
    resources: alive.map(NO_RESOURCES),
    resourcesused: alive.map(NO_RESOURCES),
    activeapps: state.activeApps.map((a) => sparkAppJson(a, now)),
    completedapps: state.completedApps.map((a) => sparkAppJson(a, now)),
    activedrivers: state.activeDrivers.map(sparkDriverJson),
    completeddrivers: state.completedDrivers.map(sparkDriverJson),
    status: state.status,
  };
}

export function sparkWorkerJson(w: WorkerSummary): Record<string, unknown> {
  return {
    id: w.id,
    host: w.host,
    port: w.port,
    webuiaddress: w.webUiAddress,
    cores: w.cores,
    coresused: w.coresUsed,
    coresfree: w.cores - w.coresUsed,
    memory: w.memory,
    memoryused: w.memoryUsed,
    memoryfree: w.memory - w.memoryUsed,
    resources: NO_RESOURCES(),
    resourcesused: NO_RESOURCES(),
    resourcesfree: NO_RESOURCES(),
    state: w.state,
    lastheartbeat: w.lastHeartbeat,
  };
}

export function sparkAppJson(a: AppSummary, now: number): Record<string, unknown> {
  return {
    id: a.id,
    starttime: a.startTime,
    name: a.name,
    // Spark 3's: the cores granted now (0 once the application has ended).
    cores: a.coresGranted,
    user: a.user,
    memoryperexecutor: a.memoryPerExecutorMB,
    memoryperslave: a.memoryPerExecutorMB,
    resourcesperexecutor: [],
    resourcesperslave: [],
    submitdate: javaDateString(a.startTime),
    state: a.state,
    duration: (a.endTime ?? now) - a.startTime,
    // Wick's own, after Spark's fields: the cap it asked for (wick.cores.max, spark.cores.max),
    // which Spark 2 wrote as `cores`; why a FAILED application failed.
    ...(a.maxCores !== undefined ? { maxcores: a.maxCores } : {}),
    ...(a.failure ? { failure: a.failure } : {}),
  };
}

/** A driver with Spark's field names (JsonProtocol.writeDriverInfo), after Wick's own ones. */
export function sparkDriverJson(d: DriverSummary): Record<string, unknown> {
  return {
    ...d,
    starttime: String(d.submitDate),
    memory: d.mem,
    resources: NO_RESOURCES(),
    submitdate: javaDateString(d.submitDate),
    worker: d.workerId ?? 'None',
    mainclass: d.appPath,
  };
}
