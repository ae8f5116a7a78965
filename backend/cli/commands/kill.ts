import type { Command } from 'commander';
import { withMaster } from '../../client/masterConnection.js';
import { RequestKillApplication, RequestKillDriver } from '../../protocol/client.js';
import { defaultMasterUrl } from '../options.js';

/** `wick kill ID`: kill an application (app-…) or a driver (driver-…). */
export function registerKill(program: Command): void {
  program
    .command('kill')
    .description('Kill an application (app-…) or a driver (driver-…)')
    .argument('<id>', 'an application or driver id')
    .option('--master <url>', 'master URL (default $WICK_MASTER or wick://127.0.0.1:7077)')
    .action(async (id: string, flags: { master?: string }) => {
      const kind = id.startsWith('app-') ? 'app' : id.startsWith('driver-') ? 'driver' : undefined;
      if (!kind)
        throw new Error(
          `Cannot kill "${id}": expected an application id (app-…) or a driver id (driver-…)`,
        );
      const reply: { success: boolean; message: string } = await withMaster(
        flags.master ?? defaultMasterUrl(),
        async (master) =>
          kind === 'app'
            ? master.ask(RequestKillApplication({ appId: id }))
            : master.ask(RequestKillDriver({ driverId: id })),
      );
      if (!reply.success) throw new Error(reply.message);
      process.stdout.write(`${reply.message}\n`);
    });
}
