import type { LogRouter } from '../../client/LogRouter.js';
import type { MasterState } from '../../client/masterConnection.js';
import { LookupFailed } from '../../client/workerLookup.js';
import { RequestLogRange } from '../../protocol/worker.js';
import type { RpcEndpointRef } from '../../rpc/index.js';
import { logFields } from '../../shared/logSource.js';

/**
 * `wick logs <app-id>`: one line per executor the master knows of the application (running, then
 * removed), with the sizes of its stdout and stderr as its worker has them, read the way its log
 * would be (directly or through the master); a worker that is gone gives its reason instead.
 */
export async function listExecutorLogs(
  state: MasterState,
  appId: string,
  router: LogRouter,
  master: RpcEndpointRef,
): Promise<string[]> {
  const app = [...state.activeApps, ...state.completedApps].find((a) => a.id === appId);
  if (!app) {
    throw new LookupFailed(
      `No application ${appId}. The master knows no application ${appId}: \`wick status\` lists what the master knows`,
    );
  }
  const executors = [...app.executors, ...app.removedExecutors];
  if (executors.length === 0) return [`Application ${appId} has no executor yet`];
  return Promise.all(
    executors.map(async (e) => {
      const id = `${appId}/${e.id}`;
      const head = `${id}\t${e.state}\t${e.workerId}`;
      try {
        const source = { appId, execId: e.id };
        const route = await router.route(state, source, master);
        const size = async (stream: 'stdout' | 'stderr') =>
          (await route.ref.ask(RequestLogRange({ ...logFields(source, stream), length: 0 })))
            .totalSize;
        const via = route.via === 'master' ? '\t(through the master)' : '';
        return `${head}\tstdout ${await size('stdout')} B\tstderr ${await size('stderr')} B${via}`;
      } catch (err) {
        return `${head}\t${(err as Error).message}`;
      }
    }),
  );
}
