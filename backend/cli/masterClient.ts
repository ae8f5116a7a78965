import { MasterStateMirror } from '../client/MasterStateMirror.js';
import type { WickConf } from '../conf/WickConf.js';
import type { MessageOf } from '../protocol/registry.js';
import { MasterStateResponse, RequestMasterState } from '../protocol/state.js';
import { type RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { parseMasterUrls } from '../worker/startWorker.js';

/**
 * A short-lived client of a master for the CLI: connects in client mode, tries every master URL
 * given, and says which it tried when none answers.
 */
export async function withMaster<T>(
  masterUrl: string,
  fn: (master: RpcEndpointRef, env: RpcEnv) => Promise<T>,
  /** The client's settings, e.g. wick.authenticate for a master that authenticates. */
  conf?: WickConf,
): Promise<T> {
  const addresses = parseMasterUrls(masterUrl);
  const env = await RpcEnv.create({
    name: 'wickClient',
    clientMode: true,
    ...(conf ? { conf } : {}),
  });
  try {
    const errors: string[] = [];
    for (const address of addresses) {
      let ref: RpcEndpointRef;
      try {
        ref = await env.setupEndpointRef(address, 'Master');
      } catch (err) {
        errors.push(`wick://${address}: ${(err as Error).message}`);
        continue;
      }
      return await fn(ref, env);
    }
    throw new Error(
      `Cannot reach a master. Tried:\n  ${errors.join('\n  ')}\nIs a master running? Start one with \`wick master\` or \`wick local-cluster\`.`,
    );
  } finally {
    await env.stop();
  }
}

export function masterState(
  master: RpcEndpointRef,
): Promise<MessageOf<typeof MasterStateResponse>> {
  return master.ask(RequestMasterState({}), MasterStateResponse, { timeout: 30_000 });
}

/** Resolves once `count` workers are ALIVE, from pushed state; reports the count as it changes. */
export async function waitForWorkers(
  masterUrl: string,
  count: number,
  progress: (alive: number) => void,
  conf?: WickConf,
): Promise<void> {
  await withMaster(
    masterUrl,
    async (master, env) => {
      const mirror = new MasterStateMirror();
      env.setupEndpoint('StateMirror', mirror);
      let last = -1;
      const alive = (s: { workers: { state: string }[] }) =>
        s.workers.filter((w) => w.state === 'ALIVE').length;
      mirror.onChange((s) => {
        const n = alive(s);
        if (n !== last) progress(n);
        last = n;
      });
      await mirror.subscribe(master);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `Only ${last} of ${count} workers registered within 60 s; see the daemon logs`,
              ),
            ),
          60_000,
        );
      });
      try {
        await Promise.race([mirror.waitFor((s) => alive(s) >= count), timeout]);
      } finally {
        clearTimeout(timer);
        mirror.unsubscribe(master);
      }
    },
    conf,
  );
}
