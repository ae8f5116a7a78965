import type { Command } from 'commander';
import { withMaster } from '../../client/masterConnection.js';
import { loadConf } from '../../conf/load.js';
import { MAX_HOST_LENGTH } from '../../protocol/bounds.js';
import { DecommissionWorkersOnHosts, MAX_DECOMMISSION_TARGETS } from '../../protocol/client.js';
import { addConfOptions, masterUrlOf } from '../options.js';

/**
 * `wick decommission <worker-id|host>…`: decommissions workers through the master (Spark 3.1's
 * DecommissionWorkersOnHosts, which its web UI's POST /workers/kill/?host= sends). A worker id
 * (worker-…) names one worker, anything else a host and every worker on it: several workers may
 * share a host, as a local cluster's do.
 */
export function registerDecommission(program: Command): void {
  addConfOptions(
    program
      .command('decommission')
      .description(
        'Decommission workers: they take no new work, let running tasks finish, then exit',
      )
      .argument('<worker-id|host...>', 'a worker id (worker-…) or a host (every worker on it)')
      .option(
        '--master <url>',
        'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
      ),
  ).action(
    async (
      targets: string[],
      flags: { master?: string; conf: string[]; propertiesFile?: string },
    ) => {
      const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
      const request = decommissionRequest(targets);
      const reply = await withMaster(
        masterUrlOf(flags.master, conf),
        (master) => master.ask(DecommissionWorkersOnHosts(request)),
        conf,
      );
      if (!reply.success) throw new Error(reply.message);
      process.stdout.write(`${reply.message}\n`);
    },
  );
}

/** The request for what the operator named, checked before it goes: ids apart from hosts. */
export function decommissionRequest(targets: readonly string[]): {
  hostnames: string[];
  workerIds: string[];
} {
  if (targets.length > MAX_DECOMMISSION_TARGETS) {
    throw new Error(
      `Cannot decommission ${targets.length} workers or hosts at once: at most ${MAX_DECOMMISSION_TARGETS}`,
    );
  }
  const hostnames: string[] = [];
  const workerIds: string[] = [];
  for (const t of targets) {
    if (t.length === 0 || t.length > MAX_HOST_LENGTH || /[\s/]/.test(t)) {
      throw new Error(
        `Cannot decommission ${JSON.stringify(t.slice(0, 100))}: expected a worker id (worker-…) or a host name (at most ${MAX_HOST_LENGTH} characters, no spaces or slashes)`,
      );
    }
    (t.startsWith('worker-') ? workerIds : hostnames).push(t);
  }
  return { hostnames, workerIds };
}
