import { isDriverFinished } from '../protocol/common.js';
import type { MessageOf } from '../protocol/registry.js';
import type { MasterStateResponse, WorkerSummary } from '../protocol/state.js';
import { relaunchOf } from './driverRuns.js';
import type { LogSource } from './logSource.js';

/** The part of the master's state a lookup reads (a MasterStateResponse, or the master's own tables). */
export type LookupState = Pick<
  MessageOf<typeof MasterStateResponse>,
  'workers' | 'activeApps' | 'completedApps' | 'activeDrivers' | 'completedDrivers'
>;

/**
 * Why no worker can serve a log (or be asked its state), with one sentence per case: the CLI prints it, the agent shows
 * it in VS Code, the web UI answers it with 404, the master's log relay fails the ask with it, so
 * they all say the same thing.
 */
export class LookupFailed extends Error {
  override readonly name = 'LookupFailed';
}

const statusHint = '`wick status` lists what the master knows';

/** The worker that ran an executor or a driver, from the master's state; else LookupFailed. */
export function findLogWorker(state: LookupState, source: LogSource): WorkerSummary {
  let workerId: string;
  let what: string;
  if ('driverId' in source) {
    const id = source.driverId;
    what = `driver ${id}`;
    const drivers = [...state.activeDrivers, ...state.completedDrivers];
    const d = drivers.find((x) => x.id === id);
    if (!d)
      throw new LookupFailed(`No driver ${id}. The master knows no driver ${id}: ${statusHint}`);
    const relaunch = d.workerId === undefined ? relaunchOf(drivers, id) : undefined;
    if (relaunch) {
      throw new LookupFailed(
        `Driver ${id} was relaunched as ${relaunch.id} (its worker was lost): its log is that driver's, \`wick logs ${relaunch.id}\``,
      );
    }
    if (d.workerId === undefined) {
      throw new LookupFailed(
        isDriverFinished(d.state)
          ? `Driver ${id} ended ${d.state} before it was launched on a worker: it has no log`
          : `Driver ${id} has not been launched on a worker (it is ${d.state}), so it has no log yet: try again once it runs`,
      );
    }
    workerId = d.workerId;
  } else {
    const { appId, execId } = source;
    what = `executor ${appId}/${execId}`;
    const app = [...state.activeApps, ...state.completedApps].find((a) => a.id === appId);
    if (!app) {
      throw new LookupFailed(
        `No application ${appId}. The master knows no application ${appId}: ${statusHint}`,
      );
    }
    const all = [...app.executors, ...app.removedExecutors];
    const e = all.find((x) => x.id === execId);
    if (!e) {
      const ids = all.map((x) => x.id).join(', ');
      throw new LookupFailed(
        `No executor ${execId} of ${appId}. Application ${appId} has ${ids ? `executors ${ids}` : 'no executor yet'}`,
      );
    }
    workerId = e.workerId;
  }
  return findWorker(state, workerId, what);
}

/**
 * A worker the master lists and that is not DEAD, by id; else LookupFailed. `ran` names what the
 * caller wants of it (`executor app-…/0`), for the message.
 */
export function findWorker(
  state: Pick<LookupState, 'workers'>,
  workerId: string,
  ran?: string,
): WorkerSummary {
  const w = state.workers.find((x) => x.id === workerId);
  const which = ran ? ` (it ran ${ran})` : '';
  if (!w) {
    throw new LookupFailed(
      `No worker ${workerId}. The master knows no worker ${workerId}${which}: ${ran ? 'it has gone, and the logs stay in its work dir' : statusHint}`,
    );
  }
  if (w.state === 'DEAD') {
    throw new LookupFailed(
      `Worker ${workerId} is DEAD${which}: it does not answer the master; try again once it registers again`,
    );
  }
  return w;
}
