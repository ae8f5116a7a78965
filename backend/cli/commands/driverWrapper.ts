import { dirname } from 'node:path';
import type { Command } from 'commander';
import { executorAuth } from '../../app/driver/driverAuth.js';
import { WorkerWatcher } from '../../app/WorkerWatcher.js';
import { APP_DIR_ENV, APP_NAME_ENV, SUBMIT_CONF_ENV } from '../../protocol/childEnv.js';
import { wickProtocol } from '../../protocol/index.js';
import { RpcEnv } from '../../rpc/index.js';
import { runAppHere } from '../../submit/runApp.js';
import { getLogger } from '../../util/log.js';

const log = getLogger('DriverWrapper');

/**
 * `wick driver-wrapper`: how a worker runs a driver in cluster deploy mode (Spark's DriverWrapper):
 * watch the worker, so the driver ends if the worker does, and run the application here.
 */
export function registerDriverWrapper(program: Command): void {
  program
    .command('driver-wrapper', { hidden: true })
    .description('Run a submitted application as a cluster-mode driver (workers launch this)')
    .argument('<worker-url>', "the worker's wick:// endpoint URI")
    .argument('<user-app>', 'the bundled application')
    .argument('[args...]', "the application's arguments")
    .passThroughOptions()
    .action(async (workerUrl: string, userApp: string, args: string[]) => {
      const master = process.env.WICK_MASTER;
      if (!master)
        throw new Error(
          'driver-wrapper needs WICK_MASTER in its environment (wick submit sets it)',
        );
      // The worker's own key for this driver (WICK_APP_CREDENTIAL), never the cluster secret: by
      // default auth this process would find the secret in this user's default secret file.
      const env = await RpcEnv.create({
        protocol: wickProtocol,
        name: 'Driver',
        clientMode: true,
        unref: true,
        auth: executorAuth(),
      });
      // Once the application is done, its exit code stands: stopping the env below also ends the
      // watcher's connection (or its attempt to connect), which is no reason to exit with 1.
      let done = false;
      env.setupEndpoint(
        WorkerWatcher.ENDPOINT_NAME,
        new WorkerWatcher(workerUrl, (code, reason) => {
          if (done) return;
          log.error(reason);
          process.exit(code);
        }),
      );
      const conf = JSON.parse(process.env[SUBMIT_CONF_ENV] ?? '{}') as Record<string, string>;
      await runAppHere({
        bundle: userApp,
        source: process.env[APP_DIR_ENV] ? `${process.env[APP_DIR_ENV]}/app` : userApp,
        args,
        master,
        appName: process.env[APP_NAME_ENV],
        conf,
      });
      process.env[APP_DIR_ENV] ??= dirname(userApp);
      process.once('beforeExit', () => {
        done = true;
        void env.stop();
      });
    });
}
