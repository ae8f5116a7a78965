import type { Offer } from './scheduler/TaskScheduler.js';

/**
 * The driver's prefetch policy, as pure functions of what it knows of its executors and of how
 * long a job's tasks take, to decisions (queue slots to offer, how much of a refill to write at
 * once, which queued tasks to take back); DriverEndpoint applies them. No I/O and no clock of its
 * own: `now` comes in, as in backend/master/scheduling.ts, so tests need no executors at all.
 *
 * Prefetch: once a job's tasks prove short, each executor whose cores are all busy also gets a
 * few of its tasks queued, so that a core that frees up starts its next task at once instead of
 * after a round trip to the driver (and the executor hands its threads several at a time). The
 * queue holds about PREFETCH_QUEUE_MS of work per core, by the job's average task duration so
 * far, and at most PREFETCH_PER_CORE tasks: so an executor that turns out slower than the others
 * holds back at most that much of the job's end. The executor still runs at most `cores` tasks at
 * a time (Executor queues the rest), and jobs of tasks longer than PREFETCH_QUEUE_MS are placed
 * exactly as Spark places them: one task per free core. Queue slots are refilled half a queue at
 * a time, so that they travel together in one write.
 *
 * Each refill costs the driver and the executor a wake-up and a write or two, which for tasks of a
 * millisecond or so is CPU taken from the tasks themselves, and on a virtual machine each wake-up
 * of a thread on another CPU costs more again: the queue is long enough that refills come every
 * half a queue of work, and that an executor may hold its tasks' ends for a while to report them
 * together (OUTCOME_HOLD_MS in the task thread, then StatusReporter's hold) and still have work to
 * spare when the refill comes. A shorter queue (bench/pi tried half this one) let task threads run
 * out and wait for the refill several times per job. The cost is the end of a job: when its last
 * tasks are queued, an executor slower than the others would finish up to a queue's worth after
 * them (keeping each queue to its share of what was left, by cores, did not help: executors run
 * at uneven speeds on a shared machine). So an executor that runs out takes over what another has
 * queued and not started (takeBack).
 */

export const PREFETCH_PER_CORE = 192;
export const PREFETCH_QUEUE_MS = 300;
/**
 * The least work a take-back moves: asking tasks back and launching them elsewhere is two round
 * trips (about a millisecond between processes on a 2-CPU machine, more on a loaded one), in
 * which the donor would have run that much itself.
 */
export const TAKE_BACK_MIN_MS = 2;
/** A refill's first part, written at once (see firstWriteSize): this much work per core. */
export const FIRST_WRITE_MS = 10;

/** What the policy reads of an executor. */
export interface ExecutorLoad {
  readonly id: string;
  readonly cores: number;
  /** Cores with no task of ours. */
  readonly freeCores: number;
  /** Tasks sent to it beyond its cores, waiting there for one. */
  readonly queued: number;
}

/** What takeBack reads of an executor besides its load. */
export interface ExecutorProgress extends ExecutorLoad {
  /** When it last reported a task's end (the caller's clock). */
  readonly heardAt: number;
  /** Queued tasks asked back that have not reported an end yet. */
  readonly takingBack: number;
}

/** Tasks queued per core for a job whose tasks take `taskMs` on average (0: no prefetch). */
export function queuePerCore(taskMs: number): number {
  return Math.min(PREFETCH_PER_CORE, Math.floor(PREFETCH_QUEUE_MS / taskMs));
}

/**
 * The queue slots to offer a job whose tasks take `taskMs`: on executors whose cores are all busy
 * and whose queue has at least half its length free (a refill of half a queue travels in one
 * write), the emptiest first, so that tasks taken back go to the executor that is short.
 */
export function queueSlots(executors: Iterable<ExecutorLoad>, taskMs: number): Offer[] {
  const perCore = queuePerCore(taskMs);
  if (perCore < 1) return [];
  const slots: Offer[] = [];
  for (const e of executors) {
    const room = e.cores * perCore - e.queued;
    if (e.freeCores === 0 && room >= Math.ceil((e.cores * perCore) / 2))
      slots.push({ executorId: e.id, freeCores: room });
  }
  slots.sort((a, b) => b.freeCores - a.freeCores);
  return slots;
}

/**
 * How many tasks of a refill go out in its first write to an executor: serializing a whole
 * refill takes a few milliseconds, which an executor short of work would spend waiting.
 */
export function firstWriteSize(cores: number, taskMs: number): number {
  return cores * Math.ceil(FIRST_WRITE_MS / taskMs);
}

/**
 * The end of a job: once no task waits to be placed, an executor with a free core would stand
 * idle while another still has tasks queued, and the job would end only when that queue is done.
 * So the executor with the most queued is asked to give back the last of them that it has not
 * started, as many as even out the two by cores. Spark places one task per free core and needs
 * no such step; its speculation (spark.speculation) is the nearest thing, for a straggling task.
 * One take-back at a time: none while one is still unanswered.
 *
 * `taskMs` is how long the tasks take (the caller passes the shortest of its running jobs', so as
 * to take back too few rather than too many). Returns the donor and how many of its last
 * launched tasks to ask back, or undefined (also when they are less than TAKE_BACK_MIN_MS of work:
 * a job of tasks of microseconds is done sooner where its tasks are).
 */
export function takeBack(
  executors: Iterable<ExecutorProgress>,
  taskMs: number,
  now: number,
): { donorId: string; count: number } | undefined {
  let idleCores = 0;
  let donor: ExecutorProgress | undefined;
  let donorQueued = 0;
  for (const e of executors) {
    if (e.takingBack > 0) return undefined;
    idleCores += e.freeCores;
    if (e.freeCores > 0 || e.queued === 0) continue;
    // Its queue now, as far as we can tell: ends are reported up to OUTCOME_HOLD_MS late, and
    // meanwhile each of its cores goes on at a task per `taskMs`.
    const queuedNow = e.queued - ((now - e.heardAt) * e.cores) / taskMs;
    if (queuedNow > donorQueued) {
      donor = e;
      donorQueued = queuedNow;
    }
  }
  if (idleCores === 0) return undefined;
  if (!donor) return undefined;
  const count = Math.floor((donorQueued * idleCores) / (idleCores + donor.cores));
  if (count < 1 || count * taskMs < TAKE_BACK_MIN_MS) return undefined;
  return { donorId: donor.id, count };
}
