import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getLogger } from '../util/log.js';
import { ConfigError, isKnownKey, WickConf } from './WickConf.js';

const log = getLogger('WickConf');

/** Environment variables and the keys they set (Spark's SPARK_MASTER_HOST and friends). */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  WICK_MASTER_HOST: 'wick.master.host',
  WICK_MASTER_PORT: 'wick.master.port',
  WICK_MASTER_WEBUI_PORT: 'wick.master.ui.port',
  WICK_WORKER_CORES: 'wick.worker.cores',
  WICK_WORKER_MEMORY: 'wick.worker.memory',
  WICK_WORKER_PORT: 'wick.worker.port',
  WICK_WORKER_WEBUI_PORT: 'wick.worker.ui.port',
  WICK_WORKER_DIR: 'wick.worker.dir',
  WICK_LOCAL_DIRS: 'wick.local.dir',
};

export interface ConfSources {
  /** `--conf key=value`, in order; a later one wins. */
  confPairs?: readonly string[];
  /** `--properties-file`; default `$WICK_CONF_DIR/wick-defaults.conf` or `conf/wick-defaults.conf`. */
  propertiesFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags and the keys they set; those with an undefined value were not given. */
  flags?: readonly { flag: string; key: string; value: string | undefined }[];
}

/**
 * Builds a daemon's configuration. Precedence, highest first: flags, `--conf`, the properties
 * file, environment variables, defaults. Unknown keys are warned about; a bad value of a known
 * key stops start-up with a message naming the key, the value and what is expected.
 */
export function loadConf(sources: ConfSources): WickConf {
  const env = sources.env ?? process.env;
  const conf = new WickConf();
  const origin = new Map<string, string>();
  const put = (key: string, value: string, from: string) => {
    conf.set(key, value);
    origin.set(key, from);
  };
  for (const [variable, key] of Object.entries(ENV_KEYS)) {
    const v = env[variable];
    if (v !== undefined && v !== '') put(key, v, `environment variable ${variable}`);
  }
  const file = sources.propertiesFile ?? defaultPropertiesFile(env);
  if (file !== undefined) {
    for (const [k, v] of readPropertiesFile(file)) put(k, v, `properties file ${file}`);
  }
  for (const pair of sources.confPairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      throw new Error(
        `Invalid --conf "${pair}": expected key=value, e.g. --conf wick.worker.timeout=30s`,
      );
    }
    put(pair.slice(0, eq).trim(), pair.slice(eq + 1), '--conf');
  }
  for (const { flag, key, value } of sources.flags ?? []) {
    if (value !== undefined) put(key, value, flag);
  }
  for (const key of conf.unknownKeys()) {
    log.warn(`Ignoring unknown configuration key ${key} (from ${origin.get(key)})`);
  }
  try {
    conf.validate();
  } catch (err) {
    if (err instanceof ConfigError) {
      throw new ConfigError(err.key, err.value, `${err.reason} (set by ${origin.get(err.key)})`, {
        cause: err.cause,
      });
    }
    throw err;
  }
  return conf;
}

function defaultPropertiesFile(env: NodeJS.ProcessEnv): string | undefined {
  const dir = env.WICK_CONF_DIR ?? 'conf';
  const path = join(dir, 'wick-defaults.conf');
  return existsSync(path) ? path : undefined;
}

/** Spark's spark-defaults.conf format: `key value`, `key=value` or `key: value`; # and ! comment. */
export function readPropertiesFile(path: string): [string, string][] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read properties file ${path}: ${(err as Error).message}`);
  }
  const out: [string, string][] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) return;
    const m = /^([^\s=:]+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (!m) throw new Error(`${path}:${i + 1}: expected "key value" or "key=value", got "${line}"`);
    out.push([m[1] as string, (m[2] as string).trim()]);
  });
  return out;
}

export { isKnownKey };
