/**
 * A real Worker process for the `launch` and `logs` benchmarks: startWorker (as `wick worker` runs
 * it) on loopback, registering with the master at MASTER_ADDRESS (the benchmark's mock master).
 * Prints {"address","workerId","pid"} once its RpcEnv is up; exits on SIGTERM or when stdin closes,
 * killing whatever it runs. Takes the profiling commands of profiling.ts on stdin.
 *
 *   node --import tsx bench/lib/workerServer.ts MASTER_ADDRESS WORK_DIR
 */
import { join } from 'node:path';
import { WickConf } from '../../backend/conf/WickConf.js';
import { WorkerWebUI } from '../../backend/http/WorkerWebUI.js';
import { startWorker } from '../../backend/worker/startWorker.js';
import { type Command, serveCommands } from './control.js';
import { exitWithParent } from './process.js';
import { profilingCommand } from './profiling.js';

const [masterAddress, dir] = process.argv.slice(2);
if (!masterAddress || !dir) throw new Error('usage: workerServer.ts MASTER_ADDRESS WORK_DIR');

const conf = new WickConf({
  'wick.worker.host': '127.0.0.1',
  'wick.worker.port': '0',
  'wick.worker.ui.port': '0',
  'wick.worker.cores': '64',
  'wick.worker.memory': '64g',
  'wick.worker.dir': join(dir, 'work'),
  'wick.local.dir': join(dir, 'local'),
});
const running = await startWorker(conf, [masterAddress], {
  webUi: (host, port, maxRetries) => WorkerWebUI.start(host, port, maxRetries, conf),
  exit: (code, reason) => {
    console.error(`worker exiting (${code}): ${reason}`);
    void running.stop().finally(() => process.exit(code));
  },
});
serveCommands(async (c: Command) => {
  const result = await profilingCommand(c);
  if (result === undefined) throw new Error(`unknown command ${c.cmd}`);
  return result;
});
exitWithParent(() => running.stop());
process.stdout.write(
  `${JSON.stringify({ address: running.env.address, workerId: running.worker.workerId, pid: process.pid })}\n`,
);
