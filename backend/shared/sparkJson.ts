import type { MessageOf } from '../protocol/registry.js';
import type { ResourceAddresses } from '../protocol/resources.js';
import type {
  AppSummary,
  DriverSummary,
  MasterStateResponse,
  WorkerSummary,
} from '../protocol/state.js';
import { javaDateString } from './javaDate.js';

/**
 * Custom resources as Spark's JsonProtocol writes them: writeResourcesInfo, an object by name of
 * `{name, addresses}` (empty for none), and writeResourceRequirement, `{name, amount}`. Drivers
 * get no resources in Wick (spark.driver.resource.* is not taken): theirs is always empty.
 */
export function sparkResourcesJson(
  resources: ResourceAddresses | undefined,
): Record<string, { name: string; addresses: string[] }> {
  return Object.fromEntries(
    Object.entries(resources ?? {}).map(([name, addresses]) => [name, { name, addresses }]),
  );
}

function freeResources(w: WorkerSummary): ResourceAddresses {
  const used = w.resourcesUsed ?? {};
  return Object.fromEntries(
    Object.entries(w.resources ?? {}).map(([n, all]) => [
      n,
      all.filter((a) => !used[n]?.includes(a)),
    ]),
  );
}

function sparkRequirementsJson(a: AppSummary): { name: string; amount: number }[] {
  return (a.resourceReqsPerExecutor ?? []).map((r) => ({ name: r.resourceName, amount: r.amount }));
}

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
    resources: alive.map((w) => sparkResourcesJson(w.resources)),
    resourcesused: alive.map((w) => sparkResourcesJson(w.resourcesUsed)),
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
    resources: sparkResourcesJson(w.resources),
    resourcesused: sparkResourcesJson(w.resourcesUsed),
    resourcesfree: sparkResourcesJson(freeResources(w)),
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
    resourcesperexecutor: sparkRequirementsJson(a),
    resourcesperslave: sparkRequirementsJson(a),
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
    resources: sparkResourcesJson(undefined),
    submitdate: javaDateString(d.submitDate),
    worker: d.workerId ?? 'None',
    mainclass: d.appPath,
  };
}
