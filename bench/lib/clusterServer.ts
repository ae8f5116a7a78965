/**
 * A local Wick cluster for the runtime benchmarks (tasks, pi, submit): a master and N workers as
 * processes, started the way `wick local-cluster` starts them (backend/launcher/localClusterProcess.ts,
 * from the built bundle dist/wick.cjs), in a fresh work dir under the system temp dir. Prints
 * {"url","logDir","workDir","pid"} once every worker has registered; on SIGTERM or when stdin
 * closes it stops the daemons (workers kill their executors first), removes its work dir and exits.
 * Run it with startServer() (process.ts), so that it never outlives the benchmark.
 *
 *   node --import tsx bench/lib/clusterServer.ts [--workers 2] [--cores 1] [--memory 1g]
 *                                                [--conf key=value ...]
 *
 * The daemons inherit this process's environment, and workers pass theirs on to executors: set
 * NODE_OPTIONS in it (startServer's `env`) to profile executors, e.g. `--cpu-prof
 * --cpu-prof-dir=DIR` (the daemons then write profiles too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalCluster } from '../../backend/launcher/localClusterProcess.js';
import { distFile } from '../../backend/util/paths.js';
import { exitWithParent } from './process.js';

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    cores: { type: 'string', default: '1' },
    memory: { type: 'string', default: '1g' },
    conf: { type: 'string', multiple: true, default: [] },
  },
  strict: true,
});

// startLocalCluster launches each daemon as `node <process.argv[1]> master|worker …`, which in the
// CLI is the bundle itself; here argv[1] is this script, so point it at the bundle.
process.argv[1] = distFile('wick.cjs');

const workDir = mkdtempSync(join(tmpdir(), 'wick-bench-cluster-'));
let removeDir = true;
const cluster = await startLocalCluster({
  workers: Number(opts.workers),
  cores: opts.cores ?? '1',
  memory: opts.memory ?? '1g',
  host: '127.0.0.1',
  port: '0',
  webuiPort: '0',
  workDir,
  conf: opts.conf ?? [],
}).catch((err: unknown) => {
  removeDir = false;
  throw err;
});

let stopping = false;
exitWithParent(async () => {
  stopping = true;
  await cluster.stop();
  if (removeDir && !process.env.WICK_BENCH_KEEP_CLUSTER_DIR)
    rmSync(workDir, { recursive: true, force: true });
});
void cluster.firstExit.then((d) => {
  if (!stopping) process.stderr.write(`cluster: ${d.name} exited unexpectedly; see ${d.log}\n`);
});
process.stdout.write(
  `${JSON.stringify({ url: cluster.url, logDir: cluster.logDir, workDir, pid: process.pid })}\n`,
);
