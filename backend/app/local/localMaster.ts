import { availableParallelism } from 'node:os';

/**
 * Spark's `local[N]` / `local[*]` master: no cluster at all; the driver's own process runs the
 * application's executors (app/local/InProcessExecutors.ts), N task threads in all. A debugger
 * attached to the driver then reaches the tasks' code too. Wick's plain `local` is something
 * else: `wick submit --master local` starts an embedded local cluster (a master and two
 * workers, in their own processes), as close to a real cluster as one machine gets.
 */
export interface LocalMaster {
  /** Task threads in all (Spark's N; `*` is this machine's available parallelism). */
  threads: number;
}

/** The most threads `local[N]` takes: each is a worker thread with its own heap. */
export const MAX_LOCAL_THREADS = 256;

const LOCAL_BRACKETS = /^local\[(.*)\]$/;

/**
 * `local[N]` or `local[*]` → its threads; anything else (plain `local` included) → undefined.
 * A `local[…]` that is neither is an error naming what was given.
 */
export function parseLocalMaster(master: string): LocalMaster | undefined {
  const m = LOCAL_BRACKETS.exec(master.trim());
  if (!m) return undefined;
  const inside = (m[1] ?? '').trim();
  if (inside === '*') return { threads: Math.min(availableParallelism(), MAX_LOCAL_THREADS) };
  if (/^\d+$/.test(inside)) {
    const n = Number(inside);
    if (n >= 1 && n <= MAX_LOCAL_THREADS) return { threads: n };
  }
  throw new Error(
    `Invalid master "${master}": expected local[N] (N a whole number from 1 to ${MAX_LOCAL_THREADS}) or local[*] (one thread per core); Spark's local[N,F] (with retries) is not supported`,
  );
}

/** Whether `master` runs the application in the driver's process (local[N], local[*]). */
export function isInProcessMaster(master: string): boolean {
  return LOCAL_BRACKETS.test(master.trim());
}
