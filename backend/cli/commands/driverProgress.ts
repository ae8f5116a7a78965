/**
 * `wick submit --deploy-mode cluster --wait`'s console progress bar: the driver runs on a worker,
 * so its stages come from what the master pushes (AppSummary.progress, from the driver's own
 * reports), not from a tracker in this process. Same rules as a client-mode driver's bar
 * (wick.ui.showConsoleProgress, stderr a terminal, the driver's output followed here never
 * written over: ConsoleProgressBar).
 *
 * A stage's age is counted from when this process first saw it, not from its submission time,
 * which is the driver's clock: a worker whose clock runs ahead would hide the bar, one behind
 * would show it for a stage that only started. The master pushes at most once per report (a
 * quarter of a second), which the first delay of half a second covers.
 */
import {
  type ActiveStage,
  ConsoleProgressBar,
} from '../../app/driver/progress/ConsoleProgressBar.js';
import type { MasterStateMirror } from '../../client/MasterStateMirror.js';
import { AppConf } from '../../conf/app.js';
import type { WickConf } from '../../conf/WickConf.js';
import type { AppSummary } from '../../protocol/state.js';

type State = NonNullable<MasterStateMirror['state']>;

/** The running stages of the application `driverId()` registered, as the bar draws them. */
export function driverStages(
  state: State | undefined,
  driverId: string | undefined,
  firstSeen: Map<string, number>,
  now: number,
): ActiveStage[] {
  if (!state || !driverId) return [];
  const app: AppSummary | undefined = state.activeApps.find((a) => a.driverId === driverId);
  const stages = app?.progress?.activeStages ?? [];
  const live = new Set<string>();
  const out: ActiveStage[] = [];
  for (const s of stages) {
    const key = `${app?.id}/${s.stageId}/${s.attemptId}`;
    live.add(key);
    let seen = firstSeen.get(key);
    if (seen === undefined) {
      seen = now;
      firstSeen.set(key, seen);
    }
    out.push({
      stageId: s.stageId,
      numTasks: s.counts.numTasks,
      numActiveTasks: s.counts.numActiveTasks,
      numCompletedTasks: s.counts.numCompletedTasks,
      submittedAtMs: seen,
    });
  }
  for (const key of firstSeen.keys()) if (!live.has(key)) firstSeen.delete(key);
  return out;
}

/**
 * Starts the bar over `mirror` for the driver whose latest run `runId()` names, when the settings
 * and the terminal allow; `stop()` clears it and gives the streams back.
 */
export function showDriverProgress(
  mirror: MasterStateMirror,
  runId: () => string | undefined,
  conf: WickConf,
  streams: { err: NodeJS.WriteStream; out: NodeJS.WriteStream } = {
    err: process.stderr,
    out: process.stdout,
  },
): { stop(): void } {
  if (!conf.get(AppConf.showConsoleProgress)) return { stop() {} };
  const firstSeen = new Map<string, number>();
  const bar = new ConsoleProgressBar({
    stages: () => driverStages(mirror.state, runId(), firstSeen, Date.now()),
    err: streams.err,
    out: streams.out,
  });
  if (!bar.enabled) return { stop() {} };
  bar.start();
  return { stop: () => bar.stop() };
}
