import type { WickConf } from '../conf/WickConf.js';
import { MAX_STATE_PAGE_ENTRIES } from '../protocol/bounds.js';
import { MASTER_ENDPOINT } from '../protocol/endpoints.js';
import { wickProtocol } from '../protocol/index.js';
import type { MessageOf } from '../protocol/registry.js';
import { type MasterStateResponse, RequestMasterState } from '../protocol/state.js';
import { type RpcEndpointRef, RpcEnv } from '../rpc/index.js';
import { parseMasterUrls } from '../rpc/masterUrls.js';
import { StatePages } from '../shared/statePages.js';

/**
 * Reaching a master from a list of URLs (`wick://h1:7077,h2:7077`, standby masters): every
 * program that talks to a master goes through here, so that they all pick the same master and
 * all say the same thing when none answers.
 */

export type MasterState = MessageOf<typeof MasterStateResponse>;

/** The error when no master of the list answered; `tried` lines are `wick://host:port: why`. */
export function noMasterReachable(tried: readonly string[]): Error {
  return new Error(
    `Cannot reach a master. Tried:\n  ${tried.join('\n  ')}\nIs a master running? Start one with \`wick master\` or \`wick local-cluster\`.`,
  );
}

/**
 * The master's whole state, read page by page (a cluster of 20,000 workers is more than one
 * frame may carry), each page within `timeout`.
 */
export async function masterState(master: RpcEndpointRef, timeout = 30_000): Promise<MasterState> {
  const pages = new StatePages();
  let after: string | undefined;
  do {
    const page = await master.ask(
      RequestMasterState({ limit: MAX_STATE_PAGE_ENTRIES, ...(after ? { after } : {}) }),
      { timeout },
    );
    pages.add(page);
    after = page.next;
  } while (after !== undefined);
  return pages.state as MasterState;
}

/** The master's header (its status, URL, masters): one page of one entry. */
function masterStatus(master: RpcEndpointRef, timeout = 30_000): Promise<MasterState> {
  return master.ask(RequestMasterState({ limit: 1 }), { timeout });
}

/**
 * The Master endpoint to talk to: with one URL, that master; with several, the first (in the
 * list's order) that leads rather than stands by, else the first that answered. Throws
 * noMasterReachable when none answers.
 */
export async function connectMaster(
  env: RpcEnv,
  masterUrl: string | readonly string[],
): Promise<RpcEndpointRef> {
  const addresses = typeof masterUrl === 'string' ? parseMasterUrls(masterUrl) : masterUrl;
  const errors: string[] = [];
  let reachable: RpcEndpointRef | undefined;
  for (const address of addresses) {
    let ref: RpcEndpointRef;
    try {
      ref = await env.setupEndpointRef(address, MASTER_ENDPOINT);
    } catch (err) {
      errors.push(`wick://${address}: ${(err as Error).message}`);
      continue;
    }
    if (addresses.length === 1) return ref;
    const state = await masterStatus(ref).catch(() => undefined);
    if (state && state.status !== 'STANDBY') return ref;
    reachable ??= ref;
  }
  if (reachable) return reachable;
  throw noMasterReachable(errors);
}

/**
 * The Master endpoint of every address that answers, all tried at once, and why the others did
 * not (for a driver, which registers with every master as Spark's StandaloneAppClient does).
 */
export async function reachMasters(
  env: RpcEnv,
  addresses: readonly string[],
): Promise<{ refs: RpcEndpointRef[]; errors: string[] }> {
  const refs: RpcEndpointRef[] = [];
  const errors: string[] = [];
  await Promise.all(
    addresses.map(async (address) => {
      try {
        refs.push(await env.setupEndpointRef(address, MASTER_ENDPOINT));
      } catch (err) {
        errors.push(`wick://${address}: ${(err as Error).message}`);
      }
    }),
  );
  return { refs, errors };
}

/** A client-mode RpcEnv for a short-lived client (the CLI's commands). */
export function clientEnv(conf?: WickConf, name = 'wickClient'): Promise<RpcEnv> {
  return RpcEnv.create({
    protocol: wickProtocol,
    name,
    clientMode: true,
    ...(conf ? { conf } : {}),
  });
}

/**
 * Runs `fn` with the master of `masterUrl` (see connectMaster) in a client-mode env of its own,
 * stopped afterwards.
 */
export async function withMaster<T>(
  masterUrl: string,
  fn: (master: RpcEndpointRef, env: RpcEnv) => Promise<T>,
  /** The client's settings, e.g. wick.authenticate for a master that authenticates. */
  conf?: WickConf,
): Promise<T> {
  const addresses = parseMasterUrls(masterUrl);
  const env = await clientEnv(conf);
  try {
    return await fn(await connectMaster(env, addresses), env);
  } finally {
    await env.stop();
  }
}

export interface MasterStatus {
  /** wick://host:port */
  url: string;
  state?: MasterState;
  /** Why it did not answer. */
  error?: string;
}

/** Asks every master of a (comma-separated) URL for its state; those that do not answer say why. */
export async function allMasterStates(masterUrl: string, conf?: WickConf): Promise<MasterStatus[]> {
  const addresses = parseMasterUrls(masterUrl);
  const env = await clientEnv(conf);
  try {
    return await Promise.all(
      addresses.map(async (address): Promise<MasterStatus> => {
        const url = `wick://${address}`;
        try {
          const ref = await env.setupEndpointRef(address, MASTER_ENDPOINT);
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

/** The leader's state, or noMasterReachable listing why each master did not answer. */
export function leaderState(statuses: readonly MasterStatus[]): MasterState {
  const leader = pickLeader(statuses);
  if (leader?.state) return leader.state;
  throw noMasterReachable(statuses.map((s) => `${s.url}: ${s.error}`));
}
