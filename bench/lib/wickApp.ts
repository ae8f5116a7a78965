/**
 * For the runtime benchmarks: a local cluster process (clusterServer.ts) and a WickContext in the
 * benchmark process whose executors are all registered before anything is timed.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import type { DriverEndpoint } from '../../backend/app/driver/DriverEndpoint.js';
import { WickContext } from '../../backend/app/index.js';
import { masterState, withMaster } from '../../backend/client/masterConnection.js';
import { type ServerProcess, startServer } from './process.js';

export interface ClusterInfo {
  url: string;
  logDir: string;
  workDir: string;
  pid: number;
}

export interface ClusterOptions {
  workers?: number;
  cores?: number;
  conf?: readonly string[];
  /** Environment for the daemons, which workers pass on to executors (e.g. NODE_OPTIONS). */
  env?: NodeJS.ProcessEnv;
}

/** Starts a master and `workers` workers of `cores` cores on loopback; resolves once all registered. */
export async function startCluster(o: ClusterOptions = {}): Promise<ServerProcess<ClusterInfo>> {
  const server = await startServer<ClusterInfo>('bench/lib/clusterServer.ts', {
    args: [
      '--workers',
      String(o.workers ?? 2),
      '--cores',
      String(o.cores ?? 1),
      ...(o.conf ?? []).flatMap((c) => ['--conf', c]),
    ],
    env: { WICK_LOG_LEVEL: 'WARN', ...o.env },
    readyTimeoutMs: 60_000,
  });
  // The server removes its work dir when it stops in time; should it be killed first (a slow
  // stop, a benchmark that fails), the dir goes when this process exits.
  const { workDir } = server.ready;
  if (!process.env.WICK_BENCH_KEEP_CLUSTER_DIR && !o.env?.WICK_BENCH_KEEP_CLUSTER_DIR) {
    process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  }
  return server;
}

/**
 * The driver endpoint behind a WickContext. WickContext keeps it private (applications have no use
 * for it); the benchmarks read it only to know how many executors have registered, so that no
 * executor start-up falls inside a timed window.
 */
export function driverOf(wc: WickContext): DriverEndpoint {
  return (wc as unknown as { driver: DriverEndpoint }).driver;
}

/** Resolves once `count` executors have registered with the driver; fails after `timeoutMs`. */
export async function waitForExecutors(
  wc: WickContext,
  count: number,
  timeoutMs = 60_000,
): Promise<void> {
  const driver = driverOf(wc);
  const deadline = performance.now() + timeoutMs;
  while (driver.executors.size < count) {
    if (performance.now() > deadline) {
      throw new Error(
        `only ${driver.executors.size} of ${count} executors registered within ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A WickContext on `masterUrl` (the driver lives in this process) with `executors` registered. */
export async function connect(
  masterUrl: string,
  appName: string,
  executors: number,
  conf: Record<string, string> = {},
): Promise<WickContext> {
  const wc = await WickContext.create({ master: masterUrl, appName, conf });
  try {
    await waitForExecutors(wc, executors);
  } catch (err) {
    await wc.stop();
    throw err;
  }
  return wc;
}

/**
 * Pids of the executor processes of application `appId` that descend from process `ancestor` (the
 * cluster server: its workers launch them), on this machine (Linux /proc). App ids are unique
 * within one master only: another cluster on this machine that started in the same second, a
 * benchmark or a test beside this one, has its own app-…-0000.
 */
export function executorPids(appId: string, ancestor: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      // A standby executor that took a launch over shows it as one title, words split by spaces.
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(/[\0 ]+/);
    } catch {
      continue;
    }
    const at = argv.indexOf('--app-id');
    if (
      argv.includes('executor') &&
      at >= 0 &&
      argv[at + 1] === appId &&
      descendsFrom(Number(entry), ancestor)
    ) {
      pids.push(Number(entry));
    }
  }
  // A confined executor is the node process under its sandbox's wrappers (bwrap, whose argv holds
  // the same command): a match that is another match's parent is a wrapper.
  const parents = new Set(pids.map(parentOf));
  return pids.filter((p) => !parents.has(p)).sort((a, b) => a - b);
}

function parentOf(pid: number): number {
  try {
    // The parent is the field after the command name, which may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

function descendsFrom(pid: number, ancestor: number): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (p === ancestor) return true;
    p = parentOf(p);
    if (p === 0) return false;
  }
  return false;
}

/**
 * Resolves once the cluster runs nothing: no active application, and every worker with all its
 * cores free (a finished application's executors are gone). Polls the master's state.
 */
export async function waitForIdleCluster(masterUrl: string, timeoutMs = 60_000): Promise<void> {
  await withMaster(masterUrl, async (master) => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const s = await masterState(master);
      const busy = s.workers.some((w) => w.coresUsed > 0 || w.executors.length > 0);
      if (s.activeApps.length === 0 && !busy && s.workers.length > 0) return;
      if (performance.now() > deadline) {
        throw new Error(
          `the cluster was still busy after ${timeoutMs} ms: ${s.activeApps.length} active app(s)`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  });
}
