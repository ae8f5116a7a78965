import type { PeerConnection, RpcSenderContext } from '../rpc/index.js';
import { refuse } from '../rpc/index.js';
import type { ApplicationInfo } from './ApplicationInfo.js';
import type { WorkerInfo } from './WorkerInfo.js';

/**
 * Who may tell the master what (docs/protocol.md, "Who may do what"): a worker's messages count
 * only over the connection it registered on, an application's only over its driver's. The ids in
 * a message say what it is about; the connection says who sent it, and the two must match.
 */

/** The connection a message came over (undefined from the master's own env: it trusts itself). */
function connectionOf(sender: RpcSenderContext): PeerConnection | undefined {
  return sender.connection;
}

export function isWorkersConnection(worker: WorkerInfo, sender: RpcSenderContext): boolean {
  const c = connectionOf(sender);
  return c === undefined || worker.connection === c;
}

/** Throws NotPermitted unless `sender` is `worker` itself. */
export function checkFromWorker(worker: WorkerInfo, sender: RpcSenderContext, what: string): void {
  if (isWorkersConnection(worker, sender)) return;
  throw refuse(what, `only ${worker.id} may send it, over the connection it registered on`);
}

export function isDriversConnection(app: ApplicationInfo, sender: RpcSenderContext): boolean {
  const c = connectionOf(sender);
  if (c === undefined || app.connection === c) return true;
  // After a master change the driver acknowledges over a connection of its own to this master;
  // it proves it is that application's driver by the key it registered with.
  return false;
}

/** Throws NotPermitted unless `sender` is `app`'s driver. */
export function checkFromDriver(
  app: ApplicationInfo,
  sender: RpcSenderContext,
  what: string,
): void {
  if (isDriversConnection(app, sender)) return;
  throw refuse(
    what,
    `only the driver of ${app.id} may send it, over the connection it registered on`,
  );
}

/**
 * Whether a connection may speak for an application it did not register on: one that proved the
 * key of that application, or of the submission that registered it, or the cluster secret (or
 * nobody proves anything: open).
 */
export function holdsKeyOf(app: ApplicationInfo, sender: RpcSenderContext): boolean {
  const p = connectionOf(sender)?.principal;
  if (p === undefined || p.kind === 'open' || p.kind === 'cluster') return true;
  if (p.kind === 'app') return p.id === app.id;
  return app.submission !== undefined && p.id === app.submission;
}
