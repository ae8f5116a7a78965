/**
 * The cost of watching a job without the job (issue 27's "watched on ÷ off" floor): one process
 * posts the events a job of `tasks` tasks posts (a stage, then each task's TaskStart and TaskEnd,
 * made as the DriverEndpoint makes them) on a LiveListenerBus that watchApplication watches, once
 * with the event log and the report to the master on and once with both off (the status tracker
 * only), alternating, `rounds` times. The master's side of each report is done in this process
 * too, as the master does it (its JSON made and parsed, the message checked against its schema,
 * applied to a MasterAppStatus): the two processes share the same 2 cores in the tasks benchmark.
 * Gives CPU µs per task of each (medians), the master's share of "on", and, for
 * the log's serializer (eventJson.ts), its µs per task event against JSON.stringify's in the same
 * run (the least of 9 tries each). What the consumers alone cost per task is the least that
 * watching adds to a driver's CPU per task, whatever the rest of the driver does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LiveListenerBus } from '../../backend/app/driver/LiveListenerBus.js';
import { watchApplication } from '../../backend/app/driver/status/watchApplication.js';
import { DEFAULT_RETENTION } from '../../backend/appstatus/AppStatusStore.js';
import { WickConf } from '../../backend/conf/WickConf.js';
import { eventJson } from '../../backend/eventlog/eventJson.js';
import type { ApplicationInfo } from '../../backend/master/ApplicationInfo.js';
import { MasterAppStatus } from '../../backend/master/appStatus/MasterAppStatus.js';
import { ReportListenerEvents } from '../../backend/protocol/app.js';
import type {
  WickListenerEvent,
  WickListenerTaskEnd,
  WickListenerTaskStart,
} from '../../backend/protocol/listener.js';
import { type MessageOf, validateMessage } from '../../backend/protocol/registry.js';
import { MAX_REPORT_EVENTS } from '../../backend/protocol/statusReport.js';
import { setLogLevel } from '../../backend/util/log.js';
import { median, round } from './stats.js';

export interface ConsumersCost {
  /** CPU µs per task with the event log and the master report on. */
  onUsPerTask: number;
  /** CPU µs per task with both off (the bus and the status tracker). */
  offUsPerTask: number;
  /** Of onUsPerTask, what the master's side of the reports took. */
  masterUsPerTask: number;
  /** µs per task event of eventJson, and of JSON.stringify, over the same events. */
  eventJsonUs: number;
  stringifyUs: number;
}

const TASKS_PER_TURN = 200;
/**
 * Tasks a second the events come at: about what the tasks benchmark's jobs reach. The pace
 * matters to the report: up to REPORTED_TASKS_PER_SECOND tasks a second go to the master one by
 * one, so the longer a job lasts, the more of its tasks the master applies one by one.
 */
export const POSTED_TASKS_PER_SECOND = 20_000;

/** Posts a job of `tasks` tasks on `bus`, as the DriverEndpoint posts them. */
async function postJob(
  bus: LiveListenerBus,
  jobId: number,
  tasks: number,
  firstTaskId: number,
  paced = true,
): Promise<void> {
  const stageId = jobId;
  const time = Date.now();
  const t0 = performance.now();
  bus.post({ event: 'WickListenerJobStart', jobId, stageIds: [stageId], time });
  bus.post({
    event: 'WickListenerStageSubmitted',
    stageId,
    stageAttemptId: 0,
    jobId,
    name: 'foreach at bench',
    numTasks: tasks,
    time,
  });
  for (let i = 0; i < tasks; i++) {
    const taskId = firstTaskId + i;
    const executorId = String(i % 2);
    bus.post({
      event: 'WickListenerTaskStart',
      taskId,
      stageId,
      stageAttemptId: 0,
      index: i,
      attempt: 0,
      executorId,
      time,
    });
    const end: WickListenerTaskEnd = {
      event: 'WickListenerTaskEnd',
      taskId,
      executorId,
      state: 'FINISHED',
    };
    end.jobId = jobId;
    end.durationMs = 0.05 + (i % 7) / 100;
    end.stageId = stageId;
    end.stageAttemptId = 0;
    end.index = i;
    bus.post(end);
    // A driver hears its executors' StatusUpdates a socket read at a time, and timers (the
    // log's, the report's) run in between: so do they here.
    if (i % TASKS_PER_TURN === TASKS_PER_TURN - 1) {
      const due = t0 + ((i + 1) * 1000) / POSTED_TASKS_PER_SECOND;
      const wait = paced ? due - performance.now() : 0;
      await new Promise((r) => (wait > 1 ? setTimeout(r, wait) : setImmediate(r)));
    }
  }
  bus.post({
    event: 'WickListenerStageCompleted',
    stageId,
    stageAttemptId: 0,
    name: 'foreach at bench',
    numTasks: tasks,
    time,
  });
  bus.post({ event: 'WickListenerJobEnd', jobId, result: 'JobSucceeded', time });
}

async function once(
  on: boolean,
  tasks: number,
  dir: string,
  n: number,
): Promise<{ us: number; masterUs: number }> {
  const conf = new WickConf()
    .set('wick.eventLog.enabled', String(on))
    .set('wick.eventLog.dir', dir)
    .set('wick.ui.reportStatus', String(on))
    .set('wick.ui.showConsoleProgress', 'false');
  const bus = new LiveListenerBus();
  const appId = `app-20261207000000-${String(n).padStart(4, '0')}`;
  const master = new MasterAppStatus({
    retention: DEFAULT_RETENTION,
    retainedApplications: 10,
    eventLogDir: undefined,
  });
  const app = { id: appId, isFinished: false } as ApplicationInfo;
  let reported = 0;
  let masterUs = 0;
  const watch = await watchApplication(
    conf,
    bus,
    { appId, appName: 'consumers' },
    async (events, coalesced) => {
      const text = JSON.stringify(
        ReportListenerEvents({ appId, events, ...(coalesced.length > 0 ? { coalesced } : {}) }),
      );
      const c0 = process.cpuUsage();
      const msg = JSON.parse(text);
      const problem = validateMessage(ReportListenerEvents, msg);
      if (problem) throw new Error(problem);
      master.apply(app, msg.events, msg.coalesced ?? [], Date.now());
      const c = process.cpuUsage(c0);
      masterUs += c.user + c.system;
      reported += msg.events.length;
    },
  );
  // A job to warm up, then the measured one; ending the watch (the log closed, the report sent)
  // is counted too: it is work the job's events caused.
  await postJob(bus, 0, Math.min(tasks, 2000), 0, false);
  const cpu0 = process.cpuUsage();
  await postJob(bus, 1, tasks, 1_000_000);
  await watch.end();
  const cpu = process.cpuUsage(cpu0);
  if (on && reported === 0) throw new Error('nothing was reported to the "master"');
  return { us: (cpu.user + cpu.system) / tasks, masterUs: masterUs / tasks };
}

/** The serializer against JSON.stringify over the same events (µs per event). */
async function serializers(tasks: number): Promise<{ eventJsonUs: number; stringifyUs: number }> {
  const events: (WickListenerTaskStart | WickListenerTaskEnd)[] = [];
  const bus = new LiveListenerBus();
  bus.onEvent((e) => {
    if (e.event === 'WickListenerTaskStart' || e.event === 'WickListenerTaskEnd') events.push(e);
  });
  await postJob(bus, 0, tasks, 0, false);
  const time = (f: (e: unknown) => string) => {
    let chars = 0;
    const t0 = performance.now();
    for (const e of events) chars += f(e).length;
    const us = ((performance.now() - t0) * 1000) / events.length;
    if (chars === 0) throw new Error('nothing serialized');
    return us;
  };
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < 9; r++) {
    a.push(time(eventJson));
    b.push(time((e) => JSON.stringify(e)));
  }
  // The least of each: on a busy machine the others are the machine's, not the code's.
  return { eventJsonUs: round(Math.min(...a), 3), stringifyUs: round(Math.min(...b), 3) };
}

/**
 * The master's side of a report alone: reports of MAX_REPORT_EVENTS task events (a job's tasks'
 * starts and ends, one by one) parsed from their JSON, checked against ReportListenerEvents and
 * applied to a MasterAppStatus; µs per event of the parse and check, and of the apply (the least
 * of `rounds` jobs of `tasks` tasks).
 */
export async function masterApplyCost(
  tasks: number,
  rounds: number,
): Promise<{ parseCheckUs: number; applyUs: number }> {
  const appId = 'app-20261207000000-0000';
  const texts: string[] = [];
  const bus = new LiveListenerBus();
  let batch: WickListenerEvent[] = [];
  const flush = () => {
    texts.push(JSON.stringify(ReportListenerEvents({ appId, events: batch })));
    batch = [];
  };
  bus.onEvent((e) => {
    batch.push(e);
    if (batch.length === MAX_REPORT_EVENTS) flush();
  });
  await postJob(bus, 0, tasks, 0, false);
  flush();
  const events = tasks * 2 + 4;
  const parse: number[] = [];
  const apply: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const master = new MasterAppStatus({
      retention: DEFAULT_RETENTION,
      retainedApplications: 10,
      eventLogDir: undefined,
    });
    const app = { id: appId, isFinished: false } as ApplicationInfo;
    let p = 0;
    let a = 0;
    const start = Date.now();
    for (const [i, text] of texts.entries()) {
      const t0 = performance.now();
      const msg = JSON.parse(text) as MessageOf<typeof ReportListenerEvents>;
      const problem = validateMessage(ReportListenerEvents, msg);
      if (problem) throw new Error(problem);
      const t1 = performance.now();
      // A time a second on: the bound on events a second is the driver's to keep, not this one's.
      master.apply(app, msg.events, msg.coalesced ?? [], start + i * 1000);
      a += performance.now() - t1;
      p += t1 - t0;
    }
    parse.push((p * 1000) / events);
    apply.push((a * 1000) / events);
  }
  return { parseCheckUs: round(Math.min(...parse), 3), applyUs: round(Math.min(...apply), 3) };
}

export async function watchConsumersCost(tasks: number, rounds: number): Promise<ConsumersCost> {
  const dir = mkdtempSync(join(os.tmpdir(), 'wick-bench-consumers-'));
  const on: number[] = [];
  const off: number[] = [];
  const masterOn: number[] = [];
  let n = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? [true, false] : [false, true]) {
        const c = await once(mode, tasks, dir, n++);
        (mode ? on : off).push(c.us);
        if (mode) masterOn.push(c.masterUs);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    onUsPerTask: round(median(on), 2),
    offUsPerTask: round(median(off), 2),
    masterUsPerTask: round(median(masterOn), 2),
    ...(await serializers(tasks)),
  };
}

// Run alone: node --import tsx bench/lib/watchConsumers.ts [tasks] [rounds]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  setLogLevel('WARN');
  const tasks = Number(process.argv[2] ?? 20_000);
  const rounds = Number(process.argv[3] ?? 5);
  const c = await watchConsumersCost(tasks, rounds);
  const m = await masterApplyCost(100_000, rounds);
  console.log(
    `consumers alone, ${tasks} tasks × ${rounds} rounds: on ${c.onUsPerTask} µs/task, off ${c.offUsPerTask} µs/task (watching adds ${round(c.onUsPerTask - c.offUsPerTask, 2)}, the master's side ${c.masterUsPerTask} of it); ` +
      `eventJson ${c.eventJsonUs} µs/event vs JSON.stringify ${c.stringifyUs} (×${round(c.eventJsonUs / c.stringifyUs, 2)}); load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  console.log(
    `master's side of reports of one by one task events: parse + check ${m.parseCheckUs} µs/event, apply ${m.applyUs} µs/event`,
  );
}
