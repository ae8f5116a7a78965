/**
 * A task-heavy job for bench/multihost: many tiny tasks, so that what is measured is scheduling
 * and the network between driver and executors, not computing. Prints the job's own time.
 *
 *   wick submit --master URL bench/apps/manyTasks.ts [tasks]
 */
import { WickContext } from 'wick';

const tasks = Number(process.argv[2] ?? 2000);
const wc = await WickContext.create({ appName: 'many tasks' });
// A first job brings the executors up: the second is the one timed.
await wc.range(0, 2, 1, 2).count();
const started = performance.now();
const n = await wc
  .range(0, tasks * 10, 1, tasks)
  .map((x) => x + 1)
  .count();
console.log(`JOB_MS ${(performance.now() - started).toFixed(1)} count ${n}`);
await wc.stop();
