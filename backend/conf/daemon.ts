import os from 'node:os';
import { parseInteger, parseSizeBytes } from './parse.js';
import { conf, define } from './WickConf.js';

/** Where the daemons listen and what a worker offers (flags and WICK_* variables set these). */

const port = (key: string, dflt: number, doc: string) =>
  define(key, String(dflt), doc, (raw) => parseInteger(raw, 0, 65535));

/** Memory in MiB from `2g`, `512m` or a bare number of MiB (as Spark's SPARK_WORKER_MEMORY). */
export function parseMemoryMB(raw: string): number {
  const trimmed = raw.trim();
  const bytes = /^\d+$/.test(trimmed) ? Number(trimmed) * 1024 * 1024 : parseSizeBytes(trimmed);
  const mb = Math.floor(bytes / (1024 * 1024));
  if (mb < 1)
    throw new Error(`expected a memory size of at least 1m, such as 512m or 2g, got "${raw}"`);
  return mb;
}

const defaultWorkerMemoryMB = Math.max(1024, Math.floor(os.totalmem() / (1024 * 1024)) - 1024);

export const DaemonConf = {
  masterHost: conf.string(
    'wick.master.host',
    os.hostname(),
    'The address the master binds and advertises.',
  ),
  masterPort: port('wick.master.port', 7077, 'The master RPC port (0: any free port).'),
  masterUiPort: port('wick.master.ui.port', 8080, "The master web UI's port (0: any free port)."),
  workerHost: conf.string(
    'wick.worker.host',
    os.hostname(),
    'The address a worker binds and advertises.',
  ),
  workerPort: port('wick.worker.port', 0, 'The worker RPC port (0: any free port).'),
  workerUiPort: port('wick.worker.ui.port', 8081, "The worker web UI's port (0: any free port)."),
  workerCores: define(
    'wick.worker.cores',
    String(os.availableParallelism()),
    'Cores a worker offers (default: all of them).',
    (raw) => parseInteger(raw, 1, 100_000),
  ),
  workerMemory: define(
    'wick.worker.memory',
    `${defaultWorkerMemoryMB}m`,
    'Memory a worker offers (default: total RAM − 1 GiB).',
    parseMemoryMB,
  ),
  workerDir: conf.string(
    'wick.worker.dir',
    'work',
    'Where a worker puts executors’ and drivers’ directories.',
  ),
  localDirs: conf.string(
    'wick.local.dir',
    os.tmpdir(),
    "Comma-separated roots for applications' scratch directories.",
  ),
};
