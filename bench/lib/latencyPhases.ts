/**
 * Where a small job's time goes on the driver, for the `latency` benchmark (issue 31, item 2's
 * measurement of the job path): timestamps at the seams of the driver's job path, taken by
 * wrapping three methods on their prototypes in the benchmark's own process, so that Wick's code
 * is measured as it is, not changed. Installed only for a series of its own, after the figures
 * that count: the wrappers cost a little.
 *
 *   action called ─ closure → WickContext.runJob ─ scheduling → TaskLauncher.launch ─ serialize
 *   and write → (launch returns) ─ wire and executors → DriverEndpoint.statusUpdate (the last of
 *   the job) ─ completion → the action's promise resolved.
 *
 * "closure": the action's function prepared (prepareFunction: parsed for its free names) and the
 * plan built; "scheduling": DAGScheduler's stage and task set, TaskScheduler's offers; "serialize
 * and write": LaunchTask built, sized and written, summed over the job's launch calls; "wire and
 * executors": from the first launch's return to the last StatusUpdate handled, i.e. both ways over
 * loopback, each executor decoding, checking, handing the task to its pool and back, reporting, and
 * the driver decoding and checking the reports (compare the raw floor's round trip); "completion":
 * the last report to the caller's await resuming.
 */
import { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { TaskLauncher } from '../../backend/app/driver/TaskLauncher.js';
import { WickContext } from '../../backend/app/driver/WickContext.js';
import { RpcEndpointRef } from '../../backend/rpc/RpcEndpointRef.js';
import { RawTaskDriver } from './rawTaskDriver.js';

export const PHASES = [
  'closure',
  'scheduling',
  'serializeAndWrite',
  'wireAndExecutors',
  'completion',
] as const;
export type Phase = (typeof PHASES)[number];

interface Marks {
  runJob?: number;
  firstLaunch?: number;
  firstLaunchEnd?: number;
  launchMs: number;
  lastStatus?: number;
}

type AnyFn = (...args: unknown[]) => unknown;

/** Wraps `name` on `proto` to call `before` (and `after`) around it; returns the undo. */
function wrap(
  proto: object,
  name: string,
  before: () => void,
  after?: (startedAt: number) => void,
): () => void {
  const target = proto as Record<string, AnyFn>;
  const original = target[name];
  if (typeof original !== 'function') {
    throw new Error(`cannot probe ${name}: no such method on its prototype any more`);
  }
  target[name] = function (this: unknown, ...args: unknown[]) {
    before();
    const t = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      after?.(t);
    }
  };
  return () => {
    target[name] = original;
  };
}

export class PhaseProbes {
  private marks: Marks | undefined;
  private readonly undo: (() => void)[];
  /**
   * How long each write to an executor held the driver during the jobs timed: Wick's (a ref's
   * flush: its LaunchTask frames in one syscall) and the floor's (the raw driver's fill). A
   * write wakes its executor, which on a machine of few CPUs may run before the driver does
   * again: then the write returns only when the executor has given its CPU back.
   */
  readonly writes = { wick: [] as number[], raw: [] as number[] };
  private timingWrites = false;

  constructor() {
    this.undo = [
      wrap(WickContext.prototype, 'runJob', () => {
        if (this.marks) this.marks.runJob ??= performance.now();
      }),
      wrap(
        TaskLauncher.prototype,
        'launch',
        () => {
          if (this.marks) this.marks.firstLaunch ??= performance.now();
        },
        (t) => {
          if (!this.marks) return;
          const now = performance.now();
          this.marks.launchMs += now - t;
          this.marks.firstLaunchEnd ??= now;
        },
      ),
      wrap(DriverEndpoint.prototype, 'statusUpdate', () => {
        if (this.marks) this.marks.lastStatus = performance.now();
      }),
      wrap(
        RpcEndpointRef.prototype,
        'flush',
        () => {},
        (t) => {
          if (this.marks) this.writes.wick.push(performance.now() - t);
        },
      ),
      this.timeRawWrites(),
    ];
  }

  /** Times the raw driver's fills that wrote (one that finds nothing to send writes nothing). */
  private timeRawWrites(): () => void {
    type Fill = (p: { socket: { bytesWritten: number } }, inFlight: number) => void;
    const proto = RawTaskDriver.prototype as unknown as { fill: Fill };
    const original = proto.fill;
    const probes = this;
    proto.fill = function (this: unknown, p, inFlight) {
      const before = p.socket.bytesWritten;
      const t = performance.now();
      original.call(this, p, inFlight);
      if (probes.timingWrites && p.socket.bytesWritten > before)
        probes.writes.raw.push(performance.now() - t);
    };
    return () => {
      proto.fill = original;
    };
  }

  /** Times the raw driver's writes during `job` (the floor's round trips). */
  async timeRaw(job: () => Promise<void>): Promise<void> {
    this.timingWrites = true;
    try {
      await job();
    } finally {
      this.timingWrites = false;
    }
  }

  /** Times one job: `job` is the action's call; resolves with ms per phase. */
  async time(job: () => Promise<void>): Promise<Record<Phase, number>> {
    const marks: Marks = { launchMs: 0 };
    this.marks = marks;
    const t0 = performance.now();
    await job();
    const t1 = performance.now();
    this.marks = undefined;
    const { runJob, firstLaunch, firstLaunchEnd, lastStatus } = marks;
    if (
      runJob === undefined ||
      firstLaunch === undefined ||
      firstLaunchEnd === undefined ||
      lastStatus === undefined
    ) {
      throw new Error(`a probe did not fire during the job: ${JSON.stringify(marks)}`);
    }
    return {
      closure: runJob - t0,
      scheduling: firstLaunch - runJob,
      serializeAndWrite: marks.launchMs,
      // The later launches of a large job overlap the executors' work: counted above, not here.
      wireAndExecutors:
        lastStatus - firstLaunchEnd - (marks.launchMs - (firstLaunchEnd - firstLaunch)),
      completion: t1 - lastStatus,
    };
  }

  uninstall(): void {
    for (const u of this.undo) u();
  }
}
