import type { ResourceRequirement } from '../../protocol/resources.js';

/**
 * The arithmetic of executors' resource requirements over counts of free addresses, for the pure
 * scheduler (scheduling.ts) and the waiting reason (Spark's ResourceUtils.resourcesMeetRequirements).
 */

/** How many executors with `reqs` the free amounts allow (Infinity without requirements). */
export function executorsAllowed(
  free: Readonly<Record<string, number>> | undefined,
  reqs: readonly ResourceRequirement[] | undefined,
): number {
  let n = Number.POSITIVE_INFINITY;
  for (const { resourceName, amount } of reqs ?? []) {
    n = Math.min(n, Math.floor((free?.[resourceName] ?? 0) / amount));
  }
  return n;
}

/** Counts down the free amounts for `count` executors with `reqs`. */
export function takeForExecutors(
  free: Record<string, number> | undefined,
  reqs: readonly ResourceRequirement[] | undefined,
  count: number,
): void {
  if (!free) return;
  for (const { resourceName, amount } of reqs ?? []) {
    free[resourceName] = (free[resourceName] ?? 0) - count * amount;
  }
}

/** `1 gpu and 2 fpga`, for messages. */
export function describeRequirements(reqs: readonly ResourceRequirement[]): string {
  return reqs.map((r) => `${r.amount} ${r.resourceName}`).join(' and ');
}

/**
 * Why no worker can take an executor with `reqs` for its resources, if that is why; `total` and
 * `free` give a worker's amounts of a resource. Undefined when resources are not what stops it.
 */
export function resourcesWaitingReason<W>(
  reqs: readonly ResourceRequirement[] | undefined,
  workers: readonly W[],
  total: (w: W) => Readonly<Record<string, number>> | undefined,
  free: (w: W) => Readonly<Record<string, number>> | undefined,
): string | undefined {
  if (!reqs || reqs.length === 0) return undefined;
  const missing = reqs.filter(
    (r) => !workers.some((w) => (total(w)?.[r.resourceName] ?? 0) >= r.amount),
  );
  if (missing.length > 0) {
    const names = missing.map((r) => r.resourceName);
    return `each executor asks for ${describeRequirements(reqs)} but no alive worker has ${describeRequirements(missing)} (workers offer them with wick.worker.resource.${names[0]}.amount and .discoveryScript)`;
  }
  if (!workers.some((w) => executorsAllowed(free(w), reqs) >= 1)) {
    return `no worker has ${describeRequirements(reqs)} free now (other executors hold them)`;
  }
  return undefined;
}
