import type { RecoveryState } from '../protocol/common.js';
import { type MasterEntry, MasterStateEvent } from '../protocol/state.js';
import type { RpcEndpointRef } from '../rpc/index.js';
import { getLogger } from '../util/log.js';
import type { ApplicationInfo } from './ApplicationInfo.js';
import type { DriverInfo } from './DriverInfo.js';
import type { WorkerInfo } from './WorkerInfo.js';

const log = getLogger('StateBroadcaster');

/**
 * Pushes the Master's changes to subscribers (the agent, the web UI) so that nobody polls. Handlers
 * mark what they touch; the marks made while one message is handled go out together as one
 * MasterStateEvent, with whole entries that the subscriber replaces by id.
 */
export class StateBroadcaster {
  private readonly subscribers = new Map<string, RpcEndpointRef>();
  private workers = new Map<string, WorkerInfo>();
  private apps = new Map<string, ApplicationInfo>();
  private drivers = new Map<string, DriverInfo>();
  private removedWorkers = new Set<string>();
  private removedApps = new Set<string>();
  private removedDrivers = new Set<string>();
  private status: RecoveryState | undefined;
  private masters: MasterEntry[] | undefined;
  private scheduled = false;
  /** The number of the last change pushed; a snapshot carries it so events can be ordered. */
  seq = 0;

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
    this.removedWorkers.delete(w.id);
    this.later();
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

  /** Sends what is marked now, if anything. */
  flush(): void {
    this.scheduled = false;
    const empty =
      this.workers.size + this.apps.size + this.drivers.size === 0 &&
      this.removedWorkers.size + this.removedApps.size + this.removedDrivers.size === 0 &&
      this.status === undefined &&
      this.masters === undefined;
    if (empty) return;
    this.seq++;
    if (this.subscribers.size > 0) {
      const event: Record<string, unknown> = { seq: this.seq };
      if (this.status !== undefined) event.status = this.status;
      if (this.masters !== undefined) event.masters = this.masters;
      if (this.workers.size) event.workers = [...this.workers.values()].map((w) => w.summary());
      if (this.apps.size) event.apps = [...this.apps.values()].map((a) => a.summary());
      if (this.drivers.size) event.drivers = [...this.drivers.values()].map((d) => d.summary());
      if (this.removedWorkers.size) event.removedWorkers = [...this.removedWorkers];
      if (this.removedApps.size) event.removedApps = [...this.removedApps];
      if (this.removedDrivers.size) event.removedDrivers = [...this.removedDrivers];
      const message = MasterStateEvent(event as Parameters<typeof MasterStateEvent>[0]);
      for (const ref of this.subscribers.values()) {
        try {
          ref.send(message);
        } catch (err) {
          log.warn(`Could not push state to ${ref}`, err);
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

  private later(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }
}
