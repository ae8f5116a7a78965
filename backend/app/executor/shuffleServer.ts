import { join } from 'node:path';
import { SHUFFLE_SERVICE_ADDRESS_ENV } from '../../protocol/childEnv.js';
import { wickProtocol } from '../../protocol/index.js';
import { SHUFFLE_ENDPOINT } from '../../protocol/shuffle.js';
import { APP_CREDENTIAL_ENV, AppKeyRing, parseCredential } from '../../rpc/credentials.js';
import { RpcEnv, RpcError, RpcErrorCode } from '../../rpc/index.js';
import { ShuffleBlockServer } from '../../shuffle/ShuffleBlockServer.js';
import type { TaskPlace } from '../task/compile.js';
import { appLocalDir } from './fetchAppFiles.js';

const LOOPBACK = '127.0.0.1';

/**
 * Where an executor's map outputs are served from. With the worker's shuffle service
 * (WICK_SHUFFLE_SERVICE_ADDRESS, wick.shuffle.service.enabled), the worker serves them, so they
 * outlive this process, and the executor listens on nothing. Otherwise its own shuffle block
 * server, on an RpcEnv of its own that listens (the executor's dials out only) and lets in only
 * the application's key, as the driver's does. Either way the files live in a folder of the
 * application's local dir, which the worker removes when the application ends. `env`: the
 * executor's own server's RpcEnv, for it to stop. `childEnv`: the environment its worker gave
 * the executor (see BackendOptions.env).
 */
export async function startShuffleServer(
  executor: {
    executorId: string;
    appId: string;
    hostname: string;
  },
  childEnv: NodeJS.ProcessEnv = process.env,
): Promise<{ place: Partial<TaskPlace>; env?: RpcEnv }> {
  const own = executor.executorId;
  const shuffleDir = join(appLocalDir(childEnv), `blockmgr-${own}`);
  const service = childEnv[SHUFFLE_SERVICE_ADDRESS_ENV];
  if (service) {
    return {
      place: { shuffleDir, shuffleLocation: service, shuffleService: true, executorId: own },
    };
  }
  const handed = childEnv[APP_CREDENTIAL_ENV];
  const credential = handed ? parseCredential(handed) : undefined;
  let keys: AppKeyRing | undefined;
  if (credential?.kind === 'app') {
    keys = new AppKeyRing();
    keys.add(credential.id, credential.key);
  }
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'wickShuffle',
    // Executors inside the driver (local[N]) serve only each other: loopback, nothing more.
    host: executor.hostname === LOOPBACK ? LOOPBACK : '0.0.0.0',
    advertiseHost: executor.hostname,
    auth: { credential, keys },
    // Inside a driver (local[N]), the driver's process ends when its application has nothing
    // left to do (WickContext's beforeExit), as without executors in it.
    unref: childEnv !== process.env,
  });
  const where = `executor ${own}`;
  env.setupEndpoint(
    SHUFFLE_ENDPOINT,
    new ShuffleBlockServer((msg) => {
      if (msg.executorId !== undefined && msg.executorId !== own) {
        throw new RpcError(
          RpcErrorCode.ShuffleBlockNotFound,
          `This is executor ${own}'s shuffle server; it has no map outputs of executor ${JSON.stringify(msg.executorId)}`,
        );
      }
      if (msg.appId !== undefined && msg.appId !== executor.appId) {
        throw new RpcError(
          RpcErrorCode.ShuffleBlockNotFound,
          `This is a shuffle server of application ${executor.appId}; it has no map outputs of ${JSON.stringify(msg.appId)}`,
        );
      }
      return { dir: shuffleDir, where };
    }),
  );
  return { place: { shuffleDir, shuffleLocation: env.address, executorId: own }, env };
}
