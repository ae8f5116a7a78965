import type { ResourceAddresses } from '../../protocol/resources.js';

/**
 * A worker's custom resources (GPUs and the like) and the executors that hold them. The master
 * decides who gets which address; the worker checks that what LaunchExecutor names is its own
 * and free, so that a confused master (or two after a failover) cannot put two executors on one
 * GPU here.
 */
export class CustomResources {
  private readonly holders = new Map<string, string>();

  constructor(readonly all: ResourceAddresses) {}

  get isEmpty(): boolean {
    return Object.keys(this.all).length === 0;
  }

  /**
   * Holds `addresses` for executor `holder`; or, holding nothing, says why not: an address this
   * worker does not have, or one another executor holds.
   */
  take(holder: string, addresses: ResourceAddresses): string | undefined {
    for (const [name, list] of Object.entries(addresses)) {
      for (const a of list) {
        if (!this.all[name]?.includes(a)) {
          return `this worker has no ${name} address ${a} (it has ${this.describe(name)})`;
        }
        const other = this.holders.get(key(name, a));
        if (other !== undefined && other !== holder) {
          return `${name} address ${a} is held by executor ${other}`;
        }
      }
    }
    for (const [name, list] of Object.entries(addresses)) {
      for (const a of list) this.holders.set(key(name, a), holder);
    }
    return undefined;
  }

  release(holder: string, addresses: ResourceAddresses): void {
    for (const [name, list] of Object.entries(addresses)) {
      for (const a of list) {
        if (this.holders.get(key(name, a)) === holder) this.holders.delete(key(name, a));
      }
    }
  }

  /** The held addresses, in the worker's order. */
  used(): ResourceAddresses {
    return Object.fromEntries(
      Object.entries(this.all).map(([n, list]) => [
        n,
        list.filter((a) => this.holders.has(key(n, a))),
      ]),
    );
  }

  private describe(name: string): string {
    const list = this.all[name];
    return list ? list.join(', ') : `no ${name}`;
  }
}

const key = (name: string, address: string) => `${name}\u0000${address}`;
