import type { TaskResourceRequest } from '../../conf/resources.js';
import type { ResourceAddresses } from '../../protocol/resources.js';

/**
 * One executor's custom resources as its tasks take them (Spark's ExecutorResourceInfo and the
 * resource part of TaskSchedulerImpl.resourceOffers): each task gets addresses of its own
 * (wick.task.resource.<name>.amount), or a share of one (an amount of 1/n: n tasks per address),
 * and gives them back when it ends. How many tasks can start now is what its free addresses
 * allow, which may be fewer than its free cores.
 */
export class TaskResourceSlots {
  /** Per resource: each address and the task shares left on it. */
  private readonly free = new Map<string, Map<string, number>>();
  private readonly held = new Map<number, ResourceAddresses>();

  constructor(
    executorResources: ResourceAddresses,
    private readonly reqs: readonly TaskResourceRequest[],
  ) {
    for (const r of reqs) {
      const shares = new Map<string, number>();
      for (const a of executorResources[r.resourceName] ?? []) shares.set(a, r.parts);
      this.free.set(r.resourceName, shares);
    }
  }

  /** How many more tasks can start here. */
  available(): number {
    let n = Number.POSITIVE_INFINITY;
    for (const r of this.reqs) {
      const shares = this.free.get(r.resourceName) as Map<string, number>;
      let fits = 0;
      if (r.parts > 1) for (const left of shares.values()) fits += left;
      else {
        let whole = 0;
        for (const left of shares.values()) if (left > 0) whole++;
        fits = Math.floor(whole / r.amount);
      }
      n = Math.min(n, fits);
    }
    return n;
  }

  /** Takes a task's addresses (the first free ones); undefined if they are not free. */
  assign(taskId: number): ResourceAddresses | undefined {
    if (this.available() < 1) return undefined;
    const out: ResourceAddresses = {};
    for (const r of this.reqs) {
      const shares = this.free.get(r.resourceName) as Map<string, number>;
      const picked: string[] = [];
      for (const [a, left] of shares) {
        if (picked.length === r.amount) break;
        if (left > 0) picked.push(a);
      }
      for (const a of picked) shares.set(a, (shares.get(a) as number) - 1);
      out[r.resourceName] = picked;
    }
    this.held.set(taskId, out);
    return out;
  }

  /** The addresses a task holds. */
  of(taskId: number): ResourceAddresses | undefined {
    return this.held.get(taskId);
  }

  /** A task ended: its addresses are free (a share goes back to its address). */
  release(taskId: number): void {
    const held = this.held.get(taskId);
    if (!held) return;
    this.held.delete(taskId);
    for (const [name, list] of Object.entries(held)) {
      const shares = this.free.get(name);
      for (const a of list) shares?.set(a, (shares.get(a) ?? 0) + 1);
    }
  }
}
