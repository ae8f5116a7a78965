import type { Command } from 'commander';
import { withMaster } from '../../client/masterConnection.js';
import { loadConf } from '../../conf/load.js';
import type { WickConf } from '../../conf/WickConf.js';
import { RequestKillApplication, RequestKillDriver } from '../../protocol/client.js';
import { addConfOptions, addTokenOption, masterUrlOf } from '../options.js';

/** `wick kill ID`: kill an application (app-…) or a driver (driver-…). */
export function registerKill(program: Command): void {
  addTokenOption(
    addConfOptions(
      program
        .command('kill')
        .description('Kill an application (app-…) or a driver (driver-…)')
        .argument('<id>', 'an application or driver id')
        .option(
          '--master <url>',
          'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
        ),
    ),
  ).action(
    async (id: string, flags: { master?: string; conf: string[]; propertiesFile?: string }) => {
      const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
      await kill(id, masterUrlOf(flags.master, conf), conf);
    },
  );
}

/** Kills `id` through the master at `masterUrl`, printing its answer (also `wick submit --kill`). */
export async function kill(id: string, masterUrl: string, conf: WickConf): Promise<void> {
  const kind = id.startsWith('app-') ? 'app' : id.startsWith('driver-') ? 'driver' : undefined;
  if (!kind)
    throw new Error(
      `Cannot kill "${id}": expected an application id (app-…) or a driver id (driver-…)`,
    );
  const reply: { success: boolean; message: string } = await withMaster(
    masterUrl,
    async (master) =>
      kind === 'app'
        ? master.ask(RequestKillApplication({ appId: id }))
        : master.ask(RequestKillDriver({ driverId: id })),
    conf,
  );
  if (!reply.success) throw new Error(reply.message);
  process.stdout.write(`${reply.message}\n`);
}
