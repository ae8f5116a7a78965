/**
 * What hangs off a driver's listener bus to watch its application: the status tracker (always;
 * `wc.statusTracker()`), the console progress bar (wick.ui.showConsoleProgress, on a terminal),
 * the event log (wick.eventLog.*) and the report to the master (wick.ui.reportStatus,
 * MasterStatusReporter.ts). Started once the application is registered, with its
 * ApplicationStart and EnvironmentUpdate, and ended with its ApplicationEnd.
 *
 * The tracker stays apart from appstatus/AppStatusStore (which the master and a history server
 * build from the same events): it keeps counts only, no task rows or metrics, because it runs in
 * the driver's event loop for every task and the driver's own API needs no more.
 */
import { userInfo } from 'node:os';
import { AppConf } from '../../../conf/app.js';
import type { WickConf } from '../../../conf/WickConf.js';
import { EventLogWriter } from '../../../eventlog/EventLogWriter.js';
import { eventLogDir } from '../../../eventlog/eventLogDir.js';
import { truncateMessage } from '../../../protocol/bounds.js';
import type { WickListenerEvent } from '../../../protocol/listener.js';
import { getLogger } from '../../../util/log.js';
import type { LiveListenerBus } from '../LiveListenerBus.js';
import { ConsoleProgressBar } from '../progress/ConsoleProgressBar.js';
import { AppStatusTracker } from './AppStatusTracker.js';
import { environmentUpdate } from './environmentUpdate.js';
import { MasterStatusReporter, type SendReport } from './MasterStatusReporter.js';

const log = getLogger('WickContext');

export interface ApplicationWatch {
  readonly tracker: AppStatusTracker;
  /** The event log's path, when one is written. */
  readonly eventLog: string | undefined;
  /** Posts ApplicationEnd, clears the progress bar and closes the event log. */
  end(failure?: string): Promise<void>;
}

export async function watchApplication(
  conf: WickConf,
  bus: LiveListenerBus,
  app: { appId: string; appName: string },
  report?: SendReport,
): Promise<ApplicationWatch> {
  const tracker = new AppStatusTracker(bus, {
    jobs: conf.get(AppConf.retainedJobs),
    stages: conf.get(AppConf.retainedStages),
  });
  // Everything hears the bus before anything is awaited: a worker's standby executor registers
  // within milliseconds of the grant, and its ExecutorAdded, posted while the event log's file
  // opens, must reach the log and the master too (it once reached neither: the master then
  // counted that executor's tasks nowhere). The log takes what came meanwhile once it is open.
  const reporter =
    report && conf.get(AppConf.reportStatus) ? new MasterStatusReporter(bus, report) : undefined;
  const logging = conf.get(AppConf.eventLogEnabled);
  const early: WickListenerEvent[] = [];
  let offLog: (() => void) | undefined = logging ? bus.onEvent((e) => early.push(e)) : undefined;
  bus.post({
    event: 'WickListenerApplicationStart',
    appName: app.appName.slice(0, 200),
    appId: app.appId.slice(0, 200),
    time: Date.now(),
    user: safeUser().slice(0, 200),
  });
  bus.post(environmentUpdate(conf));
  let writer: EventLogWriter | undefined;
  if (logging) {
    try {
      writer = await EventLogWriter.start({
        dir: eventLogDir(conf),
        appId: app.appId,
        compress: conf.get(AppConf.eventLogCompress),
        ...(conf.get(AppConf.eventLogRolling)
          ? { rollAtBytes: conf.get(AppConf.eventLogRollingMaxFileSize) }
          : {}),
        onError: (err) =>
          log.warn(`The event log stopped (${err.message}); the application goes on without it`),
      });
      const w = writer;
      offLog?.();
      for (const e of early.splice(0)) w.write(e);
      offLog = bus.onEvent((e) => w.write(e));
      log.info(`Writing the event log to ${w.path}`);
    } catch (err) {
      offLog?.();
      offLog = undefined;
      early.length = 0;
      log.warn(
        `No event log (wick.eventLog.enabled): ${(err as Error).message}; the application goes on without it`,
      );
    }
  }
  let bar: ConsoleProgressBar | undefined;
  if (conf.get(AppConf.showConsoleProgress)) {
    bar = new ConsoleProgressBar({
      stages: () => tracker.activeStages().map((s) => ({ ...s, submittedAtMs: s.submissionTime })),
      err: process.stderr,
      out: process.stdout,
    });
    if (bar.enabled) bar.start();
  }
  let ended: Promise<void> | undefined;
  return {
    tracker,
    eventLog: writer?.path,
    end(failure) {
      ended ??= (async () => {
        bar?.stop();
        bus.post({
          event: 'WickListenerApplicationEnd',
          time: Date.now(),
          ...(failure !== undefined ? { failure: truncateMessage(failure) } : {}),
        });
        offLog?.();
        await Promise.all([writer?.close(), reporter?.stop()]);
      })();
      return ended;
    },
  };
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? '';
  }
}
