import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
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
 * on `port` (a TaskDescription[]) and then adds their number, unless the thread has set
 * BATCH_CLOSED there, which it does, on finding no task left, by moving the count it has read to
 * count | BATCH_CLOSED. So a task is either read by the thread or refused (the executor keeps it),
 * never lost. Outcomes go to `port` a few at a time (see OUTCOME_HOLD_MS), and all that are left
 * when the batch ends or is stopped.
 */
export interface TaskBatchRequest {
  place: TaskPlace;
  tasks: TaskDescription[];
  control: Int32Array;
  port: MessagePort;
}

/** A task's end, as the thread posts it on the batch's port (in arrays, oldest first). */
export interface BatchOutcome {
  index: number;
  outcome: TaskOutcome;
  durationMs: number;
}

export const BATCH_STOPPED = 1 << 30;
export const BATCH_CLOSED = 1 << 30;
/** The places in a batch's control array (Int32Array of CONTROL_LENGTH). */
export const CLAIMED = 0;
export const ENDED = 1;
export const AVAILABLE = 2;
export const CONTROL_LENGTH = 3;

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
export async function runBatch(req: TaskBatchRequest): Promise<number> {
  const c = compilerFor(req.place);
  const { control, tasks, port } = req;
  let held: BatchOutcome[] = [];
  /** When the oldest outcome held ended. */
  let heldSince = 0;
  let lastMs = 0;
  const post = () => {
    postOutcomes(port, held);
    held = [];
  };
  /** Whether a task is left to run: one handed over already, or added since; else it closes. */
  const more = (i: number): boolean => {
    for (;;) {
      if (i < tasks.length) return true;
      for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
        for (const t of m.message as TaskDescription[]) tasks.push(t);
      }
      if (i < tasks.length) return true;
      // Added meanwhile: their message is on the port already (it goes before the count).
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
    post();
    port.close();
  }
  return i;
}

/** Posts outcomes; one whose result cannot be cloned (a function, say) fails its task instead. */
function postOutcomes(port: MessagePort, outcomes: BatchOutcome[]): void {
  if (outcomes.length === 0) return;
  try {
    port.postMessage(outcomes);
    return;
  } catch {
    // Find which: post them one by one.
  }
  for (const o of outcomes) {
    try {
      port.postMessage([o]);
    } catch (err) {
      port.postMessage([
        { ...o, outcome: { ok: false, error: taskError(err) } },
      ] satisfies BatchOutcome[]);
    }
  }
}
