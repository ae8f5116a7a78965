import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import { getLogger } from '../../util/log.js';

const log = getLogger('ZooKeeper');

export const { CreateMode, Exception } = zookeeper;
type Client = zookeeper.Client;
type ZkError = Error | zookeeper.Exception | null;

/** True if err is ZooKeeper's exception with that code (NO_NODE, NODE_EXISTS, ...). */
export function isZkError(err: unknown, code: number): boolean {
  return err instanceof zookeeper.Exception && err.getCode() === code;
}

/**
 * One ZooKeeper session with node-zookeeper-client, kept alive: when the server expires the
 * session (it was unreachable for longer than the session timeout) a new client and session are
 * made. Emits 'connected' (each time a session is usable again, with `fresh` true for a new
 * session), 'disconnected' and 'expired'. Calls are promises; while disconnected they wait for the
 * connection, and fail with CONNECTION_LOSS or SESSION_EXPIRED if it does not come back.
 */
export class ZkConnection extends EventEmitter {
  private client: Client;
  private closed = false;
  private connectedOnce = false;
  private stallTimer: NodeJS.Timeout | undefined;
  /** Calls waiting for an answer, failed when their client is replaced or closed. */
  private readonly pending = new Set<(err: Error) => void>();

  constructor(
    readonly url: string,
    readonly sessionTimeoutMs: number,
  ) {
    super();
    this.client = this.newClient(true);
  }

  get isConnected(): boolean {
    return this.client.getState() === zookeeper.State.SYNC_CONNECTED;
  }

  private newClient(fresh: boolean): Client {
    const client = zookeeper.createClient(this.url, {
      sessionTimeout: this.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    let freshSession = fresh;
    client.on('state', (state) => {
      if (this.closed || client !== this.client) return;
      if (state === zookeeper.State.SYNC_CONNECTED) {
        clearTimeout(this.stallTimer);
        if (!this.connectedOnce) log.info(`Connected to ZooKeeper at ${this.url}`);
        else log.info(`Connection to ZooKeeper at ${this.url} is back`);
        this.connectedOnce = true;
        this.emit('connected', freshSession);
        freshSession = false;
      } else if (state === zookeeper.State.DISCONNECTED) {
        this.watchForStall(client);
        this.emit('disconnected');
      } else if (state === zookeeper.State.EXPIRED) {
        log.warn(`ZooKeeper session expired; opening a new one at ${this.url}`);
        this.replace(client);
      }
    });
    client.connect();
    this.watchForStall(client);
    return client;
  }

  /**
   * node-zookeeper-client can wait forever for the answer to its reconnect request (seen when the
   * server restarts just as it reconnects): if it has not reconnected within twice the session
   * timeout, its session is gone anyway, so give up on it and open a new one.
   */
  private watchForStall(client: Client): void {
    clearTimeout(this.stallTimer);
    const ms = Math.max(2 * this.sessionTimeoutMs, 3_000);
    this.stallTimer = setTimeout(() => {
      if (this.closed || client !== this.client || this.isConnected) return;
      log.warn(`No session with ZooKeeper at ${this.url} for ${ms} ms; opening a new one`);
      this.replace(client);
    }, ms);
    this.stallTimer.unref();
  }

  private replace(client: Client): void {
    this.failPending('ZooKeeper session replaced');
    this.emit('expired');
    destroy(client);
    this.client = this.newClient(true);
  }

  /** Resolves once connected (or rejects after timeoutMs). */
  waitConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('connected', ok);
        reject(new Error(`Could not connect to ZooKeeper at ${this.url} in ${timeoutMs} ms`));
      }, timeoutMs);
      const ok = () => {
        clearTimeout(timer);
        resolve();
      };
      this.once('connected', ok);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.stallTimer);
    this.failPending('ZooKeeper connection closed');
    destroy(this.client);
    this.removeAllListeners();
  }

  mkdirp(path: string): Promise<void> {
    return this.call<string>((c, cb) => c.mkdirp(path, cb)).then(() => undefined);
  }

  create(path: string, data: Buffer, mode: number): Promise<string> {
    return this.call((c, cb) => c.create(path, data, mode, cb));
  }

  setData(path: string, data: Buffer): Promise<void> {
    return this.call<unknown>((c, cb) => c.setData(path, data, -1, cb)).then(() => undefined);
  }

  getData(path: string): Promise<Buffer | undefined> {
    return this.call<Buffer>((c, cb) => c.getData(path, cb)).catch((err) => {
      if (isZkError(err, Exception.NO_NODE)) return undefined;
      throw err;
    });
  }

  /** Deletes the node; fine if it is not there. */
  remove(path: string): Promise<void> {
    return this.call<void>((c, cb) => c.remove(path, -1, cb)).catch((err) => {
      if (!isZkError(err, Exception.NO_NODE)) throw err;
    });
  }

  getChildren(path: string): Promise<string[]> {
    return this.call((c, cb) => c.getChildren(path, cb));
  }

  /** The node's children, leaving a one-shot watch that calls watcher when they change. */
  getChildrenWatch(path: string, watcher: () => void): Promise<string[]> {
    return this.call((c, cb) => c.getChildren(path, () => watcher(), cb));
  }

  /** Whether the node exists, leaving a one-shot watch on it that calls watcher on its change. */
  existsWatch(path: string, watcher: () => void): Promise<boolean> {
    return this.call<unknown>((c, cb) => c.exists(path, () => watcher(), cb)).then((s) => !!s);
  }

  private call<T>(fn: (client: Client, cb: (err: ZkError, value: T) => void) => void): Promise<T> {
    if (this.closed) return Promise.reject(new Error('ZooKeeper connection closed'));
    return new Promise<T>((resolve, reject) => {
      const fail = (err: Error) => reject(err);
      this.pending.add(fail);
      fn(this.client, (err, value) => {
        this.pending.delete(fail);
        if (err) reject(err);
        else resolve(value);
      });
    });
  }

  private failPending(why: string): void {
    const calls = [...this.pending];
    this.pending.clear();
    for (const fail of calls) fail(new Error(why));
  }
}

/** Closes the session if it can, and the socket in any case, so that nothing keeps running. */
function destroy(client: Client): void {
  client.close();
  const socket = (client as unknown as { connectionManager?: { socket?: Socket } })
    .connectionManager?.socket;
  // Let the close request go out if the connection is up; then the socket goes regardless.
  setTimeout(() => socket?.destroy(), 200).unref();
}
