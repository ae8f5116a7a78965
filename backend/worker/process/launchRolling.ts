import { once } from 'node:events';
import { type RollingConf, RollingFileAppender } from '../logs/RollingFileAppender.js';
import { type Launched, type LaunchSpec, launched, newMarker, spawnMarked } from './launch.js';

/**
 * How long, after the child exits, its output may still be arriving: a grandchild that inherited
 * the pipes and lives on keeps them open; its later output is still written, but the exit is
 * reported after this at the latest.
 */
const DRAIN_AFTER_EXIT_MS = 2000;

/**
 * launch() with rolled logs (wick.executor.logs.rolling.*): the child writes to pipes and the
 * worker appends what comes to the files through a RollingFileAppender each (Spark's
 * ExecutorRunner does the same with its FileAppenders), stderr after the same header. Exit is
 * reported once both pipes are drained into the files, so that a reader told the process is done
 * finds every byte it wrote. The price, as in Spark: the child's output goes through the worker,
 * so it ends if the worker dies (the worker's children do too).
 */
export function launchRolling(spec: LaunchSpec, rolling: RollingConf): Launched {
  const append = spec.append === true;
  const out = new RollingFileAppender(spec.cwd, 'stdout', rolling, append);
  const err = new RollingFileAppender(spec.cwd, 'stderr', rolling, append);
  err.write(`${spec.header}\n${'='.repeat(40)}\n\n`);
  const marker = newMarker();
  const [file, ...args] = spec.argv as [string, ...string[]];
  const child = spawnMarked(file, args, {
    cwd: spec.cwd,
    env: spec.env,
    marker,
    stdin: 'ignore',
    out: 'pipe',
    err: 'pipe',
  });
  const drained = Promise.all(
    [
      [child.stdout, out],
      [child.stderr, err],
    ].map(async ([stream, appender]) => {
      const s = stream as NodeJS.ReadableStream | null;
      const a = appender as RollingFileAppender;
      if (s) {
        s.on('data', (b: Buffer) => a.write(b));
        await once(s, 'close').catch(() => {});
      }
      await a.close();
    }),
  );
  // Reported once the output is in the files, or DRAIN_AFTER_EXIT_MS after the exit at most.
  const ended = child.then(async (r) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      drained,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, DRAIN_AFTER_EXIT_MS);
      }),
    ]);
    clearTimeout(timer);
    return r;
  });
  return launched(spec, marker, child.pid, ended);
}
