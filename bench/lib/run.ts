import { smoke } from './args.js';
import { benchClusterSecret } from './auth.js';
import { liveCount, stopAll } from './process.js';

/** The watchdog of a smoke run: seconds of work, with room for a loaded machine. */
const SMOKE_WATCHDOG_MS = 3 * 60_000;

/**
 * Runs a benchmark's main function the way every benchmark must end, with the run's cluster secret
 * for everything it starts (auth.ts): a watchdog that stops it
 * after `watchdogMs` (in smoke mode, at most SMOKE_WATCHDOG_MS), SIGINT/SIGTERM stopping every server it started, a check that none is left
 * running, and a non-zero exit code on failure.
 */
export async function runBenchmark(
  name: string,
  main: () => Promise<void>,
  watchdogMs: number,
): Promise<void> {
  benchClusterSecret();
  const limitMs = smoke ? Math.min(watchdogMs, SMOKE_WATCHDOG_MS) : watchdogMs;
  const watchdog = setTimeout(() => {
    console.error(
      `${name} benchmark did not finish within ${Math.round(limitMs / 1000)} s; stopping`,
    );
    void stopAll().finally(() => process.exit(1));
  }, limitMs);
  watchdog.unref();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void stopAll().finally(() => process.exit(130));
    });
  }
  try {
    await main();
    if (liveCount() !== 0) throw new Error(`${liveCount()} server processes are still running`);
  } catch (err) {
    console.error(err);
    await stopAll();
    process.exitCode = 1;
  } finally {
    clearTimeout(watchdog);
  }
}
