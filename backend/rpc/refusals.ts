import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import type { Role } from '../protocol/registry.js';
import { getLogger } from '../util/log.js';
import { type Principal, principalText } from './credentials.js';
import type { RpcSenderContext } from './RpcEndpoint.js';

const log = getLogger('Refused');

/**
 * A message refused for who sent it (NotPermitted): thrown by a handler, answered to an ask with
 * its code, and logged once per connection and message type with who and what — a peer that
 * keeps trying fills no log.
 */
export class Refused extends RpcError {
  constructor(
    readonly what: string,
    readonly why: string,
  ) {
    super(RpcErrorCode.NotPermitted, `Not permitted: ${what}: ${why}`);
  }
}

/** `throw refuse('Heartbeat for worker-1', 'it came over another connection than that worker’s')`. */
export function refuse(what: string, why: string): Refused {
  return new Refused(what, why);
}

const logged = new WeakMap<object, Set<string>>();
const LOCAL = {};

/** Logs a refusal unless this connection had one for this message type already. */
export function logRefusal(type: string, sender: RpcSenderContext, err: Refused): void {
  const key = sender.connection ?? LOCAL;
  let seen = logged.get(key);
  if (!seen) {
    seen = new Set();
    logged.set(key, seen);
  }
  if (seen.has(type)) return;
  seen.add(type);
  const c = sender.connection;
  const who = c ? `${c.peer} (${principalText(c.principal)}, ${c.direction})` : 'this process';
  log.warn(
    `Refused ${err.what} from ${who}: ${err.why} (further ${type} refusals on this connection are not logged)`,
  );
}

/**
 * The roles a principal may play (Role in protocol/registry.ts) in a message from `from` to `to`:
 * the check every message passes at the router, before its handler checks the sender's identity.
 * The cluster secret opens every role; a user's token a client's; a submission's key a driver's; an application's key its
 * executors', its driver's towards them, and the master's towards that driver (which lets in
 * nothing but its application's key, so a master that took over reaches it with that key) — never
 * a driver's towards the master.
 */
export function mayPlay(
  principal: Principal,
  from: readonly Role[],
  to: readonly Role[] = [],
): boolean {
  switch (principal.kind) {
    case 'open':
    case 'cluster':
      return true;
    case 'submission':
      return sentBy(from, 'driver');
    case 'token':
      // A user's: a client's messages alone; which application it may touch is the master's
      // check (master/tokens/TokenAccess.ts).
      return sentBy(from, 'client');
    case 'app':
      return (
        sentBy(from, 'executor') ||
        (sentBy(from, 'driver') && to.includes('executor')) ||
        (sentBy(from, 'master') && to.includes('driver'))
      );
  }
}

/** Whether a message sent by `from` may come from `role`. No closure: it runs for every message. */
function sentBy(from: readonly Role[], role: Role): boolean {
  for (const r of from) if (r === 'any' || r === role) return true;
  return false;
}

/** Whether a connection holds the cluster's own key (or nobody is asked for one). */
export function isClusterPeer(sender: RpcSenderContext): boolean {
  const p = sender.connection?.principal;
  return p === undefined || p.kind === 'cluster' || p.kind === 'open';
}
