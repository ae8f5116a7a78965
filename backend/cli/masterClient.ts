import { MasterStateMirror } from '../client/MasterStateMirror.js';
import type { WickConf } from '../conf/WickConf.js';
import { wickProtocol } from '../protocol/index.js';
import type { MessageOf } from '../protocol/registry.js';
import { type MasterStateResponse, RequestMasterState } from '../protocol/state.js';
import { type RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { parseMasterUrls } from '../rpc/masterUrls.js';

/**
 * A short-lived client of a master for the CLI: connects in client mode, tries every master URL
 * given (with several, the one that leads rather than a STANDBY), and says which it tried when
 * none answers.
 */
export async function withMaster<T>(
  masterUrl: string,
  fn: (master: RpcEndpointRef, env: RpcEnv) => Promise<T>,
  /** The client's settings, e.g. wick.authenticate for a master that authenticates. */
  conf?: WickConf,
): Promise<T> {
  const addresses = parseMasterUrls(masterUrl);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'wickClient',
    clientMode: true,
    ...(conf ? { conf } : {}),
  });
  try {
    const errors: string[] = [];
    const reachable: RpcEndpointRef[] = [];
    for (const address of addresses) {
      let ref: RpcEndpointRef;
      try {
        ref = await env.setupEndpointRef(address, 'Master');
      } catch (err) {
        errors.push(`wick://${address}: ${(err as Error).message}`);
        continue;
      }
      // One master: it is the one. Several (standby masters): the leader, not a STANDBY.
      if (addresses.length === 1) return await fn(ref, env);
      const state = await masterState(ref).catch(() => undefined);
      if (state && state.status !== 'STANDBY') return await fn(ref, env);
      reachable.push(ref);
    }
    if (reachable[0]) return await fn(reachable[0], env);
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
  return master.ask(RequestMasterState({}), { timeout: 30_000 });
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

export interface MasterStatus {
  /** wick://host:port */
  url: string;
  state?: MessageOf<typeof MasterStateResponse>;
  /** Why it did not answer. */
  error?: string;
}

/** Asks every master of a (comma-separated) URL for its state; those that do not answer say why. */
export async function allMasterStates(masterUrl: string, conf?: WickConf): Promise<MasterStatus[]> {
  const addresses = parseMasterUrls(masterUrl);
  const env = await RpcEnv.create({
    protocol: wickProtocol,
    name: 'wickClient',
    clientMode: true,
    ...(conf ? { conf } : {}),
  });
  try {
    return await Promise.all(
      addresses.map(async (address): Promise<MasterStatus> => {
        const url = `wick://${address}`;
        try {
          const ref = await env.setupEndpointRef(address, 'Master');
          return { url, state: await masterState(ref) };
        } catch (err) {
          return { url, error: (err as Error).message };
        }
      }),
    );
  } finally {
    await env.stop();
  }
}

/** The master that leads (is not STANDBY), or, if none does, the first that answered. */
export function pickLeader(statuses: readonly MasterStatus[]): MasterStatus | undefined {
  return (
    statuses.find((s) => s.state && s.state.status !== 'STANDBY') ?? statuses.find((s) => s.state)
  );
}

/** Waits until one of the masters is ALIVE (elected, recovered), and returns its URLs. */
export async function leaderOf(
  masterUrl: string,
  timeoutMs: number,
  conf?: WickConf,
): Promise<{ url: string; webUiUrl: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const statuses = await allMasterStates(masterUrl, conf);
    const alive = statuses.find((s) => s.state?.status === 'ALIVE');
    if (alive?.state) return { url: alive.url, webUiUrl: alive.state.webUiUrl };
    if (Date.now() > deadline) {
      const seen = statuses.map((s) => `${s.url}: ${s.state?.status ?? s.error}`).join('; ');
      throw new Error(`No master became leader within ${timeoutMs / 1000} s (${seen})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
