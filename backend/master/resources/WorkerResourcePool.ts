import type { ResourceAddresses, ResourceRequirement } from '../../protocol/resources.js';

/**
 * One worker's custom resources as the master hands them out (Spark's WorkerResourceInfo): every
 * address the worker offered, and which of them executors hold. An address is held by one
 * executor at most: `acquire` refuses one that is held, so that two executors never share a GPU
 * whatever path (scheduling, recovery) asked.
 */
export class WorkerResourcePool {
  private readonly all = new Map<string, readonly string[]>();
  private readonly held = new Map<string, Set<string>>();

  constructor(resources: ResourceAddresses = {}) {
    for (const [name, addresses] of Object.entries(resources)) {
      this.all.set(name, [...addresses]);
      this.held.set(name, new Set());
    }
  }

  get isEmpty(): boolean {
    return this.all.size === 0;
  }

  /** How many addresses of `name` it has, free or not. */
  total(name: string): number {
    return this.all.get(name)?.length ?? 0;
  }

  free(name: string): number {
    return this.total(name) - (this.held.get(name)?.size ?? 0);
  }

  /** Free addresses by name: what the scheduler counts down as it places executors. */
  freeAmounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of this.all.keys()) out[name] = this.free(name);
    return out;
  }

  /**
   * The addresses one executor with `reqs` would get, the first free ones of each in the worker's
   * order (Spark's acquireResources); undefined when they are not all free. Holds nothing.
   */
  pick(reqs: readonly ResourceRequirement[] | undefined): ResourceAddresses | undefined {
    const out: ResourceAddresses = {};
    for (const { resourceName, amount } of reqs ?? []) {
      const held = this.held.get(resourceName);
      const free = (this.all.get(resourceName) ?? []).filter((a) => !held?.has(a));
      if (free.length < amount) return undefined;
      out[resourceName] = free.slice(0, amount);
    }
    return out;
  }

  /**
   * Holds these addresses. Those it does not have, or that another executor holds, are not taken
   * and come back by name (a recovering master warns of them); the rest are held.
   */
  acquire(addresses: ResourceAddresses): ResourceAddresses {
    const refused: ResourceAddresses = {};
    for (const [name, list] of Object.entries(addresses)) {
      const known = this.all.get(name);
      const held = this.held.get(name);
      for (const a of list) {
        if (known?.includes(a) && held && !held.has(a)) held.add(a);
        else refused[name] = [...(refused[name] ?? []), a];
      }
    }
    return refused;
  }

  release(addresses: ResourceAddresses): void {
    for (const [name, list] of Object.entries(addresses)) {
      const held = this.held.get(name);
      for (const a of list) held?.delete(a);
    }
  }

  /** Every address, by name (Spark's resourcesInfo). */
  addresses(): ResourceAddresses {
    return Object.fromEntries([...this.all].map(([n, a]) => [n, [...a]]));
  }

  /** The held addresses, in the worker's order (Spark's resourcesInfoUsed). */
  used(): ResourceAddresses {
    return this.select((name, a) => this.held.get(name)?.has(a) === true);
  }

  /** The free addresses, in the worker's order (Spark's resourcesInfoFree). */
  freeAddresses(): ResourceAddresses {
    return this.select((name, a) => this.held.get(name)?.has(a) !== true);
  }

  private select(keep: (name: string, address: string) => boolean): ResourceAddresses {
    return Object.fromEntries(
      [...this.all].map(([n, list]) => [n, list.filter((a) => keep(n, a))]),
    );
  }
}
