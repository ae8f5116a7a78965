/**
 * A CPU profile of a process the benchmark does not start itself (an executor, launched by a
 * worker), for when --cpu-prof cannot be passed: Node refuses --cpu-prof in NODE_OPTIONS, but not
 * --require. Put in the environment the cluster's daemons inherit (workers pass theirs on to
 * executors):
 *
 *   NODE_OPTIONS="--require /abs/path/bench/lib/cpuProfilePreload.cjs"
 *   WICK_BENCH_PROFILE_DIR=/abs/dir        where the .cpuprofile files go
 *   WICK_BENCH_PROFILE_MATCH=executor      profile only processes with this word in their argv
 *
 * The profile starts at start-up and is written when the process exits (process.exit included,
 * which is how executors end on SIGTERM or StopExecutor). Inspector sessions on the main thread
 * answer synchronously, which is what lets this run inside an 'exit' handler.
 */
const { Session } = require('node:inspector');
const { writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.WICK_BENCH_PROFILE_DIR;
const match = process.env.WICK_BENCH_PROFILE_MATCH ?? '';
const { isMainThread } = require('node:worker_threads');

if (dir && isMainThread && process.argv.slice(1).some((a) => a.includes(match))) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      const tag = process.argv.slice(2, 3).join('') || 'node';
      writeFileSync(join(dir, `${tag}-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
