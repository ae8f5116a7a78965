import {
  BroadcastChannel,
  isMainThread,
  type MessagePort,
  parentPort,
  receiveMessageOnPort,
  workerData,
} from 'node:worker_threads';
import type { TaskDescription, TaskError, TaskMetrics } from '../../protocol/task.js';
import { setFilesDir } from '../WickFiles.js';
import { FunctionCompiler, type TaskPlace } from './compile.js';
import { runTask } from './runTask.js';

/**
 * The body of an executor's pool threads (bundled as dist/task-worker.cjs and loaded by piscina).
 * Each thread keeps its compiled functions between tasks.
 */
let compiler: FunctionCompiler | undefined;
let compilerPlace: string | undefined;

export interface TaskRequest {
  place: TaskPlace;
  task: TaskDescription;
}

/** A task's end, with what it measured (absent when it measured nothing: most tasks). */
export type TaskOutcome = ({ ok: true; result: unknown } | { ok: false; error: TaskError }) & {
  metrics?: TaskMetrics;
};

/**
 * Tasks for one thread, run one after another (the `runBatch` export), to which the executor may
 * add more while it runs. Before it starts task i the thread claims it by moving control[CLAIMED]
 * from i to i + 1, and once it has ended sets control[ENDED] to i + 1; the executor sets
 * BATCH_STOPPED in control[CLAIMED] to take back the tasks not claimed yet (to kill one of them,
 * or to stop). control[AVAILABLE] counts the tasks the executor has handed over: it posts more
 * on its pool's adds channel (a BatchAdd naming the batch) and then adds their number, unless the
 * thread has set BATCH_CLOSED there, which it does, on finding no task left, by moving the count
 * it has read to count | BATCH_CLOSED. So a task is either read by the thread or refused (the
 * executor keeps it), never lost. Outcomes go to the executor (BatchReport, on the thread's own
 * port to its parent) a few at a time (see OUTCOME_HOLD_MS), and all that are left when the batch
 * ends or is stopped, in one last report that says how many tasks the batch ran: the batch's end.
 *
 * No channel is made per batch: with a MessagePort handed to the thread with each batch (a port
 * to set up on the thread and to close on both sides, a wake-up more), a job of one no-op task
 * cost an executor about twice the CPU and four times the time from launch to outcome (296 µs
 * against 130 of CPU, 637 µs against 160 of wall time, medians measured in-process on a loaded
 * 2-core machine).
 */
export interface TaskBatchRequest {
  place: TaskPlace;
  /** The batch's number, unique in the process: its adds and its reports carry it. */
  batch: number;
  tasks: TaskDescription[];
  control: Int32Array;
}

/** A task's end, as the thread posts it (in arrays, oldest first). */
export interface BatchOutcome {
  index: number;
  outcome: TaskOutcome;
  durationMs: number;
}

/** Tasks the executor adds to a running batch, on its pool's adds channel. */
export interface BatchAdd {
  batch: number;
  tasks: TaskDescription[];
}

/** Outcomes of a batch's tasks, oldest first; with `ran`, the batch's last report: it has ended. */
export interface BatchReport {
  wickBatch: number;
  outcomes: BatchOutcome[];
  ran?: number;
}

/** Where a batch reads the tasks added to it and posts its reports. */
export interface BatchChannels {
  /** The oldest add not read yet (for any batch), or undefined when none has come. */
  nextAdd(): BatchAdd | undefined;
  post(report: BatchReport): void;
}

/** A task thread's workerData (taskPool.ts): the name of its pool's adds channel. */
export interface TaskThreadData {
  addsChannel: string;
}

/**
 * This thread's channels, opened as the thread starts, before piscina hands it a batch: an add
 * posted once the thread has received a batch (control[RECEIVED]) is sure to reach it. Every
 * thread of a pool reads every add, and keeps those for its own batch.
 */
const threadChannels: BatchChannels | undefined = (() => {
  const data = workerData as Partial<TaskThreadData> | undefined;
  if (isMainThread || !parentPort || typeof data?.addsChannel !== 'string') return undefined;
  const parent = parentPort;
  const adds = new BroadcastChannel(data.addsChannel);
  // A message still queued when the thread's event loop turns (a task that awaits I/O) is
  // dispatched as an event, and lost without a listener: those wait here, in order, before the
  // ones still queued.
  const dispatched: BatchAdd[] = [];
  let head = 0;
  adds.onmessage = (e) => dispatched.push((e as { data: BatchAdd }).data);
  adds.unref();
  // Node reads a BroadcastChannel as it reads a port (receiveMessageOnPort's doc); its types
  // name only MessagePort.
  const queued = adds as unknown as MessagePort;
  return {
    nextAdd: () => {
      if (head < dispatched.length) {
        const add = dispatched[head++];
        if (head === dispatched.length) {
          dispatched.length = 0;
          head = 0;
        }
        return add;
      }
      return receiveMessageOnPort(queued)?.message as BatchAdd | undefined;
    },
    post: (r) => parent.postMessage(r),
  };
})();

export const BATCH_STOPPED = 1 << 30;
export const BATCH_CLOSED = 1 << 30;
/** The places in a batch's control array (Int32Array of CONTROL_LENGTH). */
export const CLAIMED = 0;
export const ENDED = 1;
export const AVAILABLE = 2;
/** Set to 1 by the thread once it has the batch: from then on, tasks may be added to it. */
export const RECEIVED = 3;
export const CONTROL_LENGTH = 4;

/**
 * The longest a thread keeps ended tasks' outcomes to post them together, as far as it can tell:
 * it posts what it holds before starting a task that, were it as long as the last one, would end
 * past this. Each post wakes the executor's main thread, which reports to the driver, which
 * refills the executor's queue: each of those wake-ups takes a CPU from a task thread for a
 * while, and on a machine whose cores all run tasks that is what a job of millisecond tasks
 * loses most (bench/pi: SparkPi runs faster with this hold than with a third of it). The driver
 * keeps PREFETCH_QUEUE_MS of work queued per core (app/driver/prefetch.ts) and refills it half a
 * queue at a time, so ends heard this late (plus StatusReporter's hold) leave the queue time to
 * be refilled (should they not, the thread runs out and closes its batch, and the refill starts
 * the next); the last task of a batch is posted as it ends. Holding no longer than half the work
 * left, or posting what is held once little work is left, left SparkPi's task threads no less
 * idle between tasks, and the first doubled the executors' writes per task.
 */
export const OUTCOME_HOLD_MS = 100;

function compilerFor(place: TaskPlace): FunctionCompiler {
  const key = JSON.stringify(place);
  if (!compiler || compilerPlace !== key) {
    compiler = new FunctionCompiler(place);
    compilerPlace = key;
    setFilesDir(place.filesDir);
  }
  return compiler;
}

async function runOne(task: TaskDescription, c: FunctionCompiler): Promise<TaskOutcome> {
  const metrics: TaskMetrics = {};
  const measured = () => (Object.keys(metrics).length > 0 ? { metrics } : {});
  try {
    return { ok: true, result: await runTask(task, c, metrics), ...measured() };
  } catch (err) {
    return { ok: false, error: taskError(err), ...measured() };
  }
}

function taskError(err: unknown): TaskError {
  const e = err instanceof Error ? err : new Error(String(err));
  return { name: e.name, message: e.message, stack: e.stack };
}

export default function run(req: TaskRequest): Promise<TaskOutcome> {
  return runOne(req.task, compilerFor(req.place));
}

/** Runs a batch (see TaskBatchRequest); resolves with how many of its tasks it ran. */
export async function runBatch(
  req: TaskBatchRequest,
  io: BatchChannels | undefined = threadChannels,
): Promise<number> {
  if (!io) throw new Error('runBatch runs on a task thread of a pool with an adds channel');
  const c = compilerFor(req.place);
  const { control, tasks, batch } = req;
  Atomics.store(control, RECEIVED, 1);
  let held: BatchOutcome[] = [];
  /** When the oldest outcome held ended. */
  let heldSince = 0;
  let lastMs = 0;
  const post = (ran?: number) => {
    postOutcomes(io, batch, held, ran);
    held = [];
  };
  /** Whether a task is left to run: one handed over already, or added since; else it closes. */
  const more = (i: number): boolean => {
    for (;;) {
      if (i < tasks.length) return true;
      for (let add = io.nextAdd(); add; add = io.nextAdd()) {
        // Others are another thread's, or a batch's this thread closed (the executor kept them).
        if (add.batch === batch) for (const t of add.tasks) tasks.push(t);
      }
      if (i < tasks.length) return true;
      // Added meanwhile: their message is on the channel already (it goes before the count).
      if (Atomics.compareExchange(control, AVAILABLE, i, i | BATCH_CLOSED) === i) return false;
    }
  };
  let i = 0;
  try {
    for (; more(i); i++) {
      if (held.length > 0 && performance.now() + lastMs - heldSince >= OUTCOME_HOLD_MS) post();
      if (Atomics.compareExchange(control, CLAIMED, i, i + 1) !== i) break;
      const started = performance.now();
      const outcome = await runOne(tasks[i] as TaskDescription, c);
      const ended = performance.now();
      lastMs = ended - started;
      if (held.length === 0) heldSince = ended;
      held.push({ index: i, outcome, durationMs: lastMs });
      Atomics.store(control, ENDED, i + 1);
    }
  } finally {
    post(i);
  }
  return i;
}

/**
 * Posts outcomes, and with `ran` the batch's end; one whose result cannot be cloned (a function,
 * say) fails its task instead.
 */
function postOutcomes(
  io: BatchChannels,
  batch: number,
  outcomes: BatchOutcome[],
  ran: number | undefined,
): void {
  const end = ran === undefined ? {} : { ran };
  if (outcomes.length === 0 && ran === undefined) return;
  try {
    io.post({ wickBatch: batch, outcomes, ...end });
    return;
  } catch {
    // Find which: post them one by one.
  }
  for (const o of outcomes) {
    try {
      io.post({ wickBatch: batch, outcomes: [o] });
    } catch (err) {
      io.post({
        wickBatch: batch,
        outcomes: [{ ...o, outcome: { ok: false, error: taskError(err) } }],
      });
    }
  }
  if (ran !== undefined) io.post({ wickBatch: batch, outcomes: [], ...end });
}
