import { LAUNCHER_ENV, launcherEnv } from '../../conf/launcherEnv.js';

/** More workers than this on one machine is a typo, not a plan. */
export const MAX_WORKER_INSTANCES = 64;

/**
 * How many workers `wick start-worker` starts here: `--instances`, else WICK_WORKER_INSTANCES,
 * else Spark's SPARK_WORKER_INSTANCES, else 1.
 */
export function workerInstances(flag: string | undefined, env: NodeJS.ProcessEnv): number {
  const given =
    flag !== undefined
      ? { name: '--instances', value: flag }
      : launcherEnv(env, LAUNCHER_ENV.workerInstances);
  if (!given) return 1;
  const n = Number(given.value.trim());
  if (!/^\s*\d{1,3}\s*$/.test(given.value) || n < 1 || n > MAX_WORKER_INSTANCES) {
    throw new Error(
      `${given.name} is "${given.value}": expected a whole number of workers from 1 to ${MAX_WORKER_INSTANCES}`,
    );
  }
  return n;
}

/**
 * Instance `instance`'s port, counted up from the base as Spark's start-worker.sh does
 * (port + instance − 1); a base of 0 (any free port) stays 0 for each.
 */
export function instancePort(base: number, instance: number): number {
  if (base === 0) return 0;
  const port = base + instance - 1;
  if (port > 65535) {
    throw new Error(
      `worker ${instance} would listen on port ${port} (base ${base} + ${instance - 1}), above 65535: choose a lower base port`,
    );
  }
  return port;
}

/**
 * The environment the daemons get: this one without the number of instances, which only the
 * launcher reads (`wick worker` warns about SPARK_WORKER_INSTANCES, since it starts one).
 */
export function withoutInstances(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of LAUNCHER_ENV.workerInstances) delete out[name];
  return out;
}
