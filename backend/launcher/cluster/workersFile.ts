/**
 * conf/workers: the machines `wick start-workers` starts workers on, one a line, `#` comments, as
 * Spark's conf/workers (read by sbin/workers.sh). Found at $WICK_WORKERS (Spark's SPARK_WORKERS),
 * else in $WICK_CONF_DIR (default conf/); a conf/slaves of Spark before 3.1 is read too, with a
 * line saying to rename it; with neither, the one worker is this machine, `localhost`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LAUNCHER_ENV, launcherEnv } from '../../conf/launcherEnv.js';

export interface WorkerHosts {
  hosts: string[];
  /** The file read; undefined when none exists (hosts is then [localhost]). */
  file?: string;
  /** Said once when a deprecated file was read. */
  deprecation?: string;
}

/** More hosts than this in one file is a mistake (a log pasted in), not a cluster. */
export const MAX_WORKER_HOSTS = 10_000;

export function readWorkerHosts(env: NodeJS.ProcessEnv = process.env): WorkerHosts {
  const given = launcherEnv(env, LAUNCHER_ENV.workersFile);
  if (given) {
    if (!existsSync(given.value))
      throw new Error(
        `${given.name} is "${given.value}", which does not exist: expected a file of hosts`,
      );
    return {
      hosts: parseWorkerHosts(readFileSync(given.value, 'utf8'), given.value),
      file: given.value,
    };
  }
  const dir = env.WICK_CONF_DIR || 'conf';
  const workers = join(dir, 'workers');
  if (existsSync(workers))
    return { hosts: parseWorkerHosts(readFileSync(workers, 'utf8'), workers), file: workers };
  const slaves = join(dir, 'slaves');
  if (existsSync(slaves)) {
    return {
      hosts: parseWorkerHosts(readFileSync(slaves, 'utf8'), slaves),
      file: slaves,
      deprecation: `${slaves} is deprecated (as in Spark 3.1): rename it to ${workers}`,
    };
  }
  return { hosts: ['localhost'] };
}

/** ssh's destination: [user@]host, a name, an IPv4 address or an IPv6 one. */
const HOST = /^([A-Za-z0-9._-]{1,64}@)?[A-Za-z0-9._:[\]-]{1,253}$/;

export function parseWorkerHosts(text: string, file: string): string[] {
  const hosts: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    if (!HOST.test(line) || line.startsWith('-')) {
      throw new Error(
        `${file}:${i + 1}: "${line}" is not a host: expected one host name or address a line ([user@]host), # for comments`,
      );
    }
    hosts.push(line);
  });
  if (hosts.length > MAX_WORKER_HOSTS)
    throw new Error(`${file} lists ${hosts.length} hosts; at most ${MAX_WORKER_HOSTS}`);
  if (hosts.length === 0)
    throw new Error(`${file} lists no host: one a line, or remove the file for localhost`);
  return hosts;
}
