import { MASTER_STATE_PAGE_BYTES } from '../protocol/bounds.js';
import type { RecoveryState } from '../protocol/common.js';
import { RpcError, RpcErrorCode } from '../protocol/errors.js';
import {
  type AppSummary,
  type DriverSummary,
  type MasterEntry,
  MasterStateEvent,
  MasterStateSubscriptionDropped,
  type WorkerSummary,
} from '../protocol/state.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { getLogger } from '../util/log.js';
import type { ApplicationInfo } from './ApplicationInfo.js';
import type { DriverInfo } from './DriverInfo.js';
import type { WorkerInfo } from './WorkerInfo.js';

const log = getLogger('StateBroadcaster');

/** What the broadcaster needs of the connections its subscribers are on. */
export interface SubscriberLinks {
  /** Bytes queued for the subscriber's connection and not yet sent. */
  backlog(ref: RpcEndpointRef): number;
  /**
   * Whether `address` is only a client's: a client-mode env with no worker and no application
   * registered from it, whose connection may be closed without losing either.
   */
  isClientOnly(address: string): boolean;
  /** Closes the subscriber's connection, dropping what is queued for it. */
  disconnect(ref: RpcEndpointRef, reason: string): void;
}

export interface StateBroadcasterOptions {
  /** wick.master.subscriber.maxBacklog, in bytes. */
  maxBacklog: number;
  links: SubscriberLinks;
}

/** Past this many entries an event is measured, and split if it is larger than a page. */
const SPLIT_CHECK_ENTRIES = 64;

/**
 * How long a heartbeat's new time may wait to go out. Pushed one by one, the heartbeats of 10,000
 * workers (667 a second at the default timeout) made the master build, send, and every subscriber
 * apply, an event per heartbeat: the master's CPU per heartbeat rose from 1.2 to 1.9 times a bare
 * server's. The pages show the time to the second, so one push a second loses nothing they show.
 */
export const HEARTBEAT_PUSH_MS = 1000;

/**
 * The most heartbeats one push carries; the rest follow a turn of the event loop later. A push of
 * 10,000 workers' times held the master for 30 ms at once (the master bench's lag p99).
 */
export const HEARTBEATS_PER_PUSH = 1000;

/**
 * Pushes the Master's changes to subscribers (the agent, the web UI) so that nobody polls. Handlers
 * mark what they touch; the marks made while one message is handled go out together as one
 * MasterStateEvent, with whole entries that the subscriber replaces by id (several events, one
 * after another, when they would be more than a page of the state).
 *
 * A subscriber that does not read would have the master queue every change for it, without end
 * (one such client grew a master to 1.8 GB). Once more than wick.master.subscriber.maxBacklog bytes
 * wait for its connection, it is dropped: a client-mode one is disconnected, which frees what was
 * queued (it cannot be told: anything sent would queue behind what it does not read); a worker's
 * or a driver's connection carries the cluster's own messages, so there the subscription alone
 * ends, and the subscriber is told (MasterStateSubscriptionDropped) once it reads again.
 */
export class StateBroadcaster {
  private readonly subscribers = new Map<string, RpcEndpointRef>();
  private workers = new Map<string, WorkerInfo>();
  /** Workers whose last heartbeat alone changed since the last push. */
  private beats = new Map<string, WorkerInfo>();
  private beatTimer: NodeJS.Timeout | undefined;
  private apps = new Map<string, ApplicationInfo>();
  private drivers = new Map<string, DriverInfo>();
  private removedWorkers = new Set<string>();
  private removedApps = new Set<string>();
  private removedDrivers = new Set<string>();
  private status: RecoveryState | undefined;
  private masters: MasterEntry[] | undefined;
  private scheduled = false;
  private stopped = false;
  /** The number of the last change pushed; a snapshot carries it so events can be ordered. */
  seq = 0;

  constructor(private readonly options?: StateBroadcasterOptions) {}

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  subscribe(ref: RpcEndpointRef): void {
    this.subscribers.set(ref.toString(), ref);
  }

  unsubscribe(ref: RpcEndpointRef): void {
    this.subscribers.delete(ref.toString());
  }

  /** Drops the subscribers that lived in an RpcEnv that disconnected. */
  dropAddress(address: string): void {
    for (const [key, ref] of this.subscribers)
      if (ref.address === address) this.subscribers.delete(key);
  }

  worker(w: WorkerInfo): void {
    this.workers.set(w.id, w);
    this.beats.delete(w.id);
    this.removedWorkers.delete(w.id);
    this.later();
  }
  /** Goes out with the next push, or within HEARTBEAT_PUSH_MS when nothing else changes. */
  workerHeartbeat(w: WorkerInfo): void {
    if (this.workers.has(w.id) || this.stopped) return;
    this.beats.set(w.id, w);
    this.beatTimer ??= setTimeout(() => this.flush(HEARTBEATS_PER_PUSH), HEARTBEAT_PUSH_MS).unref();
  }
  app(a: ApplicationInfo): void {
    this.apps.set(a.id, a);
    this.removedApps.delete(a.id);
    this.later();
  }
  driver(d: DriverInfo): void {
    this.drivers.set(d.id, d);
    this.removedDrivers.delete(d.id);
    this.later();
  }
  workerRemoved(id: string): void {
    this.workers.delete(id);
    this.beats.delete(id);
    this.removedWorkers.add(id);
    this.later();
  }
  appRemoved(id: string): void {
    this.apps.delete(id);
    this.removedApps.add(id);
    this.later();
  }
  driverRemoved(id: string): void {
    this.drivers.delete(id);
    this.removedDrivers.add(id);
    this.later();
  }
  statusChanged(s: RecoveryState): void {
    this.status = s;
    this.later();
  }

  mastersChanged(m: MasterEntry[]): void {
    this.masters = m;
    this.later();
  }

  /**
   * Sends what is marked, then nothing more: the master is stopping, and messages it still
   * handles meanwhile (a heartbeat) must not leave a push due after its RpcEnv has stopped.
   */
  stop(): void {
    this.flush();
    this.stopped = true;
  }

  /**
   * Sends what is marked now, if anything, with up to `beatsAtMost` of the heartbeats due (all of
   * them unless told): those left go a turn of the event loop later.
   */
  flush(beatsAtMost = Number.POSITIVE_INFINITY): void {
    this.scheduled = false;
    clearTimeout(this.beatTimer);
    this.beatTimer = undefined;
    if (this.stopped) return;
    let taken = 0;
    for (const [id, w] of this.beats) {
      if (taken++ >= beatsAtMost) break;
      this.workers.set(id, w);
      this.beats.delete(id);
    }
    if (this.beats.size > 0) {
      this.beatTimer = setTimeout(() => this.flush(HEARTBEATS_PER_PUSH), 0).unref();
    }
    const empty =
      this.workers.size + this.apps.size + this.drivers.size === 0 &&
      this.removedWorkers.size + this.removedApps.size + this.removedDrivers.size === 0 &&
      this.status === undefined &&
      this.masters === undefined;
    if (empty) return;
    if (this.subscribers.size === 0) {
      this.seq++;
    } else {
      this.dropLagging();
      for (const message of this.events()) {
        for (const ref of this.subscribers.values()) {
          try {
            ref.send(message);
          } catch (err) {
            // The master's own RpcEnv stopping (its last flush): every subscriber's connection
            // closes with it, which tells them more than a warning here would.
            if (err instanceof RpcError && err.code === RpcErrorCode.RpcEnvStopped) {
              log.debug(`Not pushing state to ${ref}: the RpcEnv stopped`);
            } else {
              log.warn(`Could not push state to ${ref}`, err);
            }
          }
        }
      }
    }
    this.workers = new Map();
    this.apps = new Map();
    this.drivers = new Map();
    this.removedWorkers = new Set();
    this.removedApps = new Set();
    this.removedDrivers = new Set();
    this.status = undefined;
    this.masters = undefined;
  }

  /**
   * The marked changes as events, numbered from seq + 1: one, unless its entries come to more than
   * a page, for a subscriber's frame limit and so that no single push is hundreds of megabytes.
   */
  private events(): ReturnType<typeof MasterStateEvent>[] {
    const workers = [...this.workers.values()].map((w) => w.summary());
    const apps = [...this.apps.values()].map((a) => a.summary());
    const drivers = [...this.drivers.values()].map((d) => d.summary());
    const chunks = split(workers, apps, drivers);
    return chunks.map((chunk, i) => {
      const event: Record<string, unknown> = { seq: ++this.seq };
      if (i === 0) {
        if (this.status !== undefined) event.status = this.status;
        if (this.masters !== undefined) event.masters = this.masters;
      }
      if (chunk.workers.length) event.workers = chunk.workers;
      if (chunk.apps.length) event.apps = chunk.apps;
      if (chunk.drivers.length) event.drivers = chunk.drivers;
      if (i === chunks.length - 1) {
        if (this.removedWorkers.size) event.removedWorkers = [...this.removedWorkers];
        if (this.removedApps.size) event.removedApps = [...this.removedApps];
        if (this.removedDrivers.size) event.removedDrivers = [...this.removedDrivers];
      }
      return MasterStateEvent(event as Parameters<typeof MasterStateEvent>[0]);
    });
  }

  /** Ends the subscriptions of those whose connection has more than maxBacklog bytes unsent. */
  private dropLagging(): void {
    const options = this.options;
    if (!options) return;
    for (const [key, ref] of this.subscribers) {
      const queued = options.links.backlog(ref);
      if (queued <= options.maxBacklog) continue;
      this.subscribers.delete(key);
      const mib = (n: number) =>
        n < 1024 * 1024 ? `${n} bytes` : `${(n / (1024 * 1024)).toFixed(1)} MiB`;
      const why = `${mib(queued)} of state pushes unread, more than wick.master.subscriber.maxBacklog (${mib(options.maxBacklog)})`;
      if (options.links.isClientOnly(ref.address)) {
        log.warn(`Disconnecting state subscriber ${ref}: ${why}`);
        options.links.disconnect(ref, `State subscriber ${ref} fell behind: ${why}`);
      } else {
        log.warn(`Dropping state subscriber ${ref} (its connection stays up): ${why}`);
        try {
          ref.send(MasterStateSubscriptionDropped({ reason: why }));
        } catch {
          // Its connection is gone: nothing to tell.
        }
      }
    }
  }

  private later(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush(HEARTBEATS_PER_PUSH));
  }
}

interface Chunk {
  workers: WorkerSummary[];
  apps: AppSummary[];
  drivers: DriverSummary[];
}

/** The entries in chunks of about a page each (one chunk when there are few). */
function split(workers: WorkerSummary[], apps: AppSummary[], drivers: DriverSummary[]): Chunk[] {
  if (workers.length + apps.length + drivers.length <= SPLIT_CHECK_ENTRIES) {
    return [{ workers, apps, drivers }];
  }
  const chunks: Chunk[] = [];
  let chunk: Chunk = { workers: [], apps: [], drivers: [] };
  let bytes = 0;
  const add = <K extends keyof Chunk>(kind: K, entry: Chunk[K][number]) => {
    const size = JSON.stringify(entry).length;
    if (bytes > 0 && bytes + size > MASTER_STATE_PAGE_BYTES) {
      chunks.push(chunk);
      chunk = { workers: [], apps: [], drivers: [] };
      bytes = 0;
    }
    (chunk[kind] as Chunk[K][number][]).push(entry);
    bytes += size;
  };
  for (const w of workers) add('workers', w);
  for (const a of apps) add('apps', a);
  for (const d of drivers) add('drivers', d);
  chunks.push(chunk);
  return chunks;
}
