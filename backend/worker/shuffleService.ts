import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { WickConf } from '../conf/WickConf.js';
import { WorkerConf } from '../conf/worker.js';
import { wickProtocol } from '../protocol/index.js';
import { SHUFFLE_ENDPOINT } from '../protocol/shuffle.js';
import { deriveKey, type KeyRing } from '../rpc/credentials.js';
import { RpcEnv, RpcError, RpcErrorCode, type RpcSenderContext, refuse } from '../rpc/index.js';
import { type BlockDirResolver, ShuffleBlockServer } from '../shuffle/ShuffleBlockServer.js';
import { getLogger } from '../util/log.js';

const log = getLogger('ExternalShuffleService');

/** An application's local dirs here, made by the worker for its executors (AppDirectories). */
export interface AppDirsLookup {
  existing(appId: string): readonly string[];
}

/** Master ids of executors are integers (protocol ExecId): a name made of one stays in its dir. */
const EXEC_ID = /^\d{1,10}$/;

/**
 * The worker's external shuffle service (Spark's ExternalShuffleService, which a Spark worker runs
 * when spark.shuffle.service.enabled): it serves the map outputs its executors wrote, so that they
 * outlive an executor that dies. An RpcEnv of its own, on wick.shuffle.service.port (Spark's
 * 7337), rather than the worker's: the worker's env accepts the cluster secret and every role,
 * and is the master's control channel; this one accepts application keys only (no cluster or
 * submission key opens it, as none has blocks here) and carries nothing but bulk reads, each
 * in its own endpoint's inbox.
 *
 * Which application's blocks a fetch may read is decided by its connection: the app key it
 * proved at the handshake. Only with authentication off (no cluster secret: anyone is anything)
 * does the message's appId say it. The blocks are read only under the local dirs the worker made
 * for that application (`blockmgr-<executorId>` in the first, where its executors write), by
 * integer ids, so no fetch reaches another application's files or anything outside those dirs;
 * nor through a symbolic link the application's code planted there (blockFiles.ts, and the
 * folders are checked too). Executors run as the worker's user, so their code could read much of
 * this itself; the checks keep the service from being a way around whatever separation there is
 * (a sandbox, another mount namespace). Separating applications on disk would take a user per
 * application, which Spark's standalone mode lacks too.
 */
export async function startShuffleService(
  conf: WickConf,
  host: string,
  clusterSecret: string | undefined,
  dirs: AppDirsLookup,
): Promise<RpcEnv> {
  const keys: KeyRing | undefined =
    clusterSecret === undefined
      ? undefined
      : {
          keyFor: (kind, id) =>
            kind === 'app' && id !== undefined ? deriveKey(clusterSecret, 'app', id) : undefined,
        };
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'wickShuffleService',
    host,
    port: conf.get(WorkerConf.shuffleServicePort),
    conf,
    auth: { credential: undefined, keys },
  });
  env.setupEndpoint(SHUFFLE_ENDPOINT, new ShuffleBlockServer(serviceDirResolver(dirs)));
  log.info(`Started the external shuffle service on ${env.address}`);
  return env;
}

/** The resolver of the worker's shuffle service: by the connection's application, then its dirs. */
export function serviceDirResolver(dirs: AppDirsLookup): BlockDirResolver {
  return async (msg, sender) => {
    const appId = applicationOf(msg.appId, sender);
    const root = dirs.existing(appId)[0];
    if (root === undefined) {
      throw new RpcError(
        RpcErrorCode.ShuffleBlockNotFound,
        `This worker's shuffle service has no map outputs of application ${appId}: none of its executors ran here, or it ended`,
      );
    }
    const execId = msg.executorId;
    if (execId === undefined || !EXEC_ID.test(execId)) {
      throw new RpcError(
        RpcErrorCode.ShuffleBlockNotFound,
        `A worker's shuffle service needs the executorId (an integer, the map output's MapStatus.executorId) of the executor that wrote the block, got ${JSON.stringify(execId)}`,
      );
    }
    const where = `this worker's shuffle service (application ${appId}, executor ${execId})`;
    const dir = join(root, `blockmgr-${execId}`);
    // The folders too are the application's to change: neither may be a link to elsewhere.
    for (const d of [root, dir]) {
      const st = await lstat(d).catch(() => undefined);
      if (!st?.isDirectory()) {
        throw new RpcError(
          RpcErrorCode.ShuffleBlockNotFound,
          `No map outputs of executor ${execId} here: ${where} has no folder ${d}`,
        );
      }
    }
    return { dir, where };
  };
}

/** The application whose blocks `sender` may read: its connection's, or (open) the one named. */
function applicationOf(named: string | undefined, sender: RpcSenderContext): string {
  const p = sender.connection?.principal;
  if (p?.kind === 'app') {
    if (named !== undefined && named !== p.id) {
      throw refuse(
        `FetchShuffleBlock for application ${named}`,
        `this connection proved the key of ${p.id}, and may read that application's blocks only`,
      );
    }
    return p.id;
  }
  if ((p === undefined || p.kind === 'open') && named !== undefined) return named;
  if (p === undefined || p.kind === 'open') {
    throw new RpcError(
      RpcErrorCode.InvalidParams,
      "With authentication off, a worker's shuffle service needs the appId of the blocks' application in FetchShuffleBlock",
    );
  }
  throw refuse(
    'FetchShuffleBlock',
    `only an application's key opens the shuffle service, not the ${p.kind === 'cluster' ? 'cluster secret' : `key of ${p.kind}:${p.id}`}`,
  );
}
