/**
 * Why an application waits or a driver stays SUBMITTED, in words that name what a VS Code user can
 * change: the master speaks of wick.executor.memory (a --conf key), which is not a VS Code setting;
 * here it becomes the submit's question and its default's setting.
 */
import type { MasterState } from '../../backend/agent/protocol.js';
import { mb } from '../tree/nodes/item.js';

type App = MasterState['activeApps'][number];
type Driver = MasterState['activeDrivers'][number];

/** The conf keys a master's reason may name, and what a VS Code user changes instead. */
const inVsCode: Record<string, string> = {
  'wick.executor.memory':
    'the executor memory of the submit (default: setting wick.submit.executorMemory)',
  'wick.executor.cores':
    'the cores per executor of the submit (default: setting wick.submit.executorCores)',
  'wick.cores.max': 'setting wick.submit.maxCores',
};

export function appWaitingReason(a: App): string | undefined {
  if (a.state !== 'WAITING') return undefined;
  const reason = a.waitingReason ?? 'waiting for resources';
  return reason.replace(
    /wick\.(executor\.memory|executor\.cores|cores\.max)/g,
    (key) => inVsCode[key] ?? key,
  );
}

/**
 * Why a driver is still SUBMITTED (cluster mode: it waits for a worker with its cores and memory
 * free), worked out from the state the master pushes; the master does not say.
 */
export function driverWaitingReason(d: Driver, state: MasterState): string | undefined {
  if (d.state !== 'SUBMITTED') return undefined;
  const alive = state.workers.filter((w) => w.state === 'ALIVE');
  if (alive.length === 0) return 'no worker is alive';
  const asks = `the driver asks for ${d.cores} core${d.cores === 1 ? '' : 's'} and ${mb(d.mem)}`;
  if (!alive.some((w) => w.memory >= d.mem && w.cores >= d.cores))
    return `${asks}; no worker is that big (add a bigger worker)`;
  if (!alive.some((w) => w.memory - w.memoryUsed >= d.mem && w.cores - w.coresUsed >= d.cores))
    return `${asks}; no worker has that free now (it starts when one does)`;
  return undefined;
}

/** True when waiting will not end by itself: no worker alive now could ever run it. */
export function waitsForGood(reason: string): boolean {
  return /largest worker|no worker is that big|no worker is alive/.test(reason);
}

export interface Watched {
  appId?: string;
  driverId?: string;
}

/** What to tell the user now, 'done' when nothing can happen any more, undefined to keep waiting. */
export function waitingNews(w: Watched, s: MasterState | undefined): string | 'done' | undefined {
  if (!s) return undefined;
  const app = w.appId
    ? [...s.activeApps, ...s.completedApps].find((a) => a.id === w.appId)
    : undefined;
  if (app) {
    const why = appWaitingReason(app);
    if (why === undefined) return 'done';
    return waitsForGood(app.waitingReason ?? '')
      ? `${app.name} (${app.id}) is WAITING: ${why}`
      : undefined;
  }
  const driver = w.driverId
    ? [...s.activeDrivers, ...s.completedDrivers].find((d) => d.id === w.driverId)
    : undefined;
  if (!driver) return undefined;
  const why = driverWaitingReason(driver, s);
  if (driver.state !== 'SUBMITTED') return 'done';
  return why && waitsForGood(why)
    ? `Driver ${driver.id} is SUBMITTED, not started: ${why}`
    : undefined;
}
