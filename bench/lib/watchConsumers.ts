/**
 * The cost of watching a job without the job (issue 27's "watched on ÷ off" floor): one process
 * posts the events a job of `tasks` tasks posts (a stage, then each task's TaskStart and TaskEnd,
 * made as the DriverEndpoint makes them) on a LiveListenerBus that watchApplication watches, once
 * with the event log and the report to the master on (the report sent as an RPC would send it:
 * its JSON made, nothing else) and once with both off (the status tracker only), alternating,
 * `rounds` times. Gives CPU µs per task of each (medians), the event log's own share, and, for
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
import { WickConf } from '../../backend/conf/WickConf.js';
import { eventJson } from '../../backend/eventlog/eventJson.js';
import type {
  WickListenerTaskEnd,
  WickListenerTaskStart,
} from '../../backend/protocol/listener.js';
import { setLogLevel } from '../../backend/util/log.js';
import { median, round } from './stats.js';

export interface ConsumersCost {
  /** CPU µs per task with the event log and the master report on. */
  onUsPerTask: number;
  /** CPU µs per task with both off (the bus and the status tracker). */
  offUsPerTask: number;
  /** µs per task event of eventJson, and of JSON.stringify, over the same events. */
  eventJsonUs: number;
  stringifyUs: number;
}

const TASKS_PER_TURN = 200;

/** Posts a job of `tasks` tasks on `bus`, as the DriverEndpoint posts them. */
async function postJob(
  bus: LiveListenerBus,
  jobId: number,
  tasks: number,
  firstTaskId: number,
): Promise<void> {
  const stageId = jobId;
  const time = Date.now();
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
    if (i % TASKS_PER_TURN === TASKS_PER_TURN - 1) await new Promise((r) => setImmediate(r));
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

async function once(on: boolean, tasks: number, dir: string, n: number): Promise<number> {
  const conf = new WickConf()
    .set('wick.eventLog.enabled', String(on))
    .set('wick.eventLog.dir', dir)
    .set('wick.ui.reportStatus', String(on))
    .set('wick.ui.showConsoleProgress', 'false');
  const bus = new LiveListenerBus();
  let reportedBytes = 0;
  const watch = await watchApplication(
    conf,
    bus,
    { appId: `app-20261207000000-${String(n).padStart(4, '0')}`, appName: 'consumers' },
    async (events, coalesced) => {
      reportedBytes += JSON.stringify({ events, coalesced }).length;
    },
  );
  // A job to warm up, then the measured one; ending the watch (the log closed, the report sent)
  // is counted too: it is work the job's events caused.
  await postJob(bus, 0, Math.min(tasks, 2000), 0);
  const cpu0 = process.cpuUsage();
  await postJob(bus, 1, tasks, 1_000_000);
  await watch.end();
  const cpu = process.cpuUsage(cpu0);
  if (on && reportedBytes === 0) throw new Error('nothing was reported to the "master"');
  return (cpu.user + cpu.system) / tasks;
}

/** The serializer against JSON.stringify over the same events (µs per event). */
async function serializers(tasks: number): Promise<{ eventJsonUs: number; stringifyUs: number }> {
  const events: (WickListenerTaskStart | WickListenerTaskEnd)[] = [];
  const bus = new LiveListenerBus();
  bus.onEvent((e) => {
    if (e.event === 'WickListenerTaskStart' || e.event === 'WickListenerTaskEnd') events.push(e);
  });
  await postJob(bus, 0, tasks, 0);
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

export async function watchConsumersCost(tasks: number, rounds: number): Promise<ConsumersCost> {
  const dir = mkdtempSync(join(os.tmpdir(), 'wick-bench-consumers-'));
  const on: number[] = [];
  const off: number[] = [];
  let n = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? [true, false] : [false, true]) {
        (mode ? on : off).push(await once(mode, tasks, dir, n++));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    onUsPerTask: round(median(on), 2),
    offUsPerTask: round(median(off), 2),
    ...(await serializers(tasks)),
  };
}

// Run alone: node --import tsx bench/lib/watchConsumers.ts [tasks] [rounds]
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  setLogLevel('WARN');
  const tasks = Number(process.argv[2] ?? 100_000);
  const rounds = Number(process.argv[3] ?? 5);
  const c = await watchConsumersCost(tasks, rounds);
  console.log(
    `consumers alone, ${tasks} tasks × ${rounds} rounds: on ${c.onUsPerTask} µs/task, off ${c.offUsPerTask} µs/task (watching adds ${round(c.onUsPerTask - c.offUsPerTask, 2)}); ` +
      `eventJson ${c.eventJsonUs} µs/event vs JSON.stringify ${c.stringifyUs} (×${round(c.eventJsonUs / c.stringifyUs, 2)}); load ${os.loadavg()[0]?.toFixed(1)}`,
  );
}
