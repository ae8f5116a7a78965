/**
 * What a submit asks of one executor, against what the cluster's workers have: an executor that no
 * worker could ever hold leaves the application WAITING for good, so the user hears it before
 * submitting, not after. Pure: the tests give it states.
 */
import type { MasterState } from '../../backend/agent/protocol.js';
import { mb } from '../tree/nodes/item.js';

export interface Asked {
  /** As the user wrote it: 512m, 2g, 500g. */
  executorMemory?: string;
  executorCores?: number;
}

const units: Record<string, number> = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };

/** Spark's memory strings in MiB (a bare number is MiB, as spark.executor.memory reads it). */
export function memoryMiB(s: string): number | undefined {
  const m = /^(\d+)([kmgt]?)$/i.exec(s.trim());
  if (!m) return undefined;
  return Number(m[1]) * (units[(m[2] || 'm').toLowerCase()] as number);
}

/**
 * Why no worker alive now could run one executor of this submit, or undefined when one could.
 * Only what cannot change by itself counts (a bigger worker must join): a busy cluster is not
 * a reason to warn, the app just waits its turn.
 */
export function resourceProblem(asked: Asked, state: MasterState | undefined): string | undefined {
  const alive = (state?.workers ?? []).filter((w) => w.state === 'ALIVE');
  if (alive.length === 0) return undefined; // Nothing to compare with yet (a cluster starting).
  const wanted = asked.executorMemory ? memoryMiB(asked.executorMemory) : undefined;
  const biggestMemory = Math.max(...alive.map((w) => w.memory));
  if (wanted !== undefined && wanted > biggestMemory)
    return `${asked.executorMemory} is more than the largest worker's ${mb(biggestMemory)}`;
  const cores = asked.executorCores;
  const mostCores = Math.max(...alive.map((w) => w.cores));
  if (cores !== undefined && cores > mostCores)
    return `${cores} cores per executor is more than the largest worker's ${mostCores}`;
  return undefined;
}
