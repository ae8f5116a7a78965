import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getLogger } from '../util/log.js';
import { ignoredSparkEnv, SPARK_ENV_KEYS } from './sparkNames.js';
import { ConfigError, isKnownKey, WickConf, wickKey } from './WickConf.js';

const log = getLogger('WickConf');

/** Set ('1') in a process re-started by its parent with the parent's settings, already warned of. */
export const CONF_WARNED_ENV = 'WICK_CONF_WARNED';

/**
 * Environment variables and the keys they set (Spark's SPARK_MASTER_HOST and friends, whose
 * spark-env.sh names are taken too: sparkNames.ts).
 */
export const ENV_KEYS: Readonly<Record<string, string>> = {
  WICK_MASTER: 'wick.master',
  WICK_MASTER_HOST: 'wick.master.host',
  WICK_MASTER_PORT: 'wick.master.port',
  WICK_MASTER_WEBUI_PORT: 'wick.master.ui.port',
  WICK_WORKER_HOST: 'wick.worker.host',
  WICK_WORKER_CORES: 'wick.worker.cores',
  WICK_WORKER_MEMORY: 'wick.worker.memory',
  WICK_WORKER_PORT: 'wick.worker.port',
  WICK_WORKER_WEBUI_PORT: 'wick.worker.ui.port',
  WICK_WORKER_DIR: 'wick.worker.dir',
  WICK_LOCAL_DIRS: 'wick.local.dir',
  WICK_EXECUTOR_SANDBOX: 'wick.executor.sandbox',
  WICK_EXECUTOR_SANDBOX_READ_ONLY_PATHS: 'wick.executor.sandbox.readOnlyPaths',
};

/** The properties files read when no --properties-file is given, lowest precedence first. */
export const DEFAULT_PROPERTIES_FILES = ['spark-defaults.conf', 'wick-defaults.conf'] as const;

export interface ConfSources {
  /** `--conf key=value`, in order; a later one wins. */
  confPairs?: readonly string[];
  /**
   * `--properties-file`; default `spark-defaults.conf` then `wick-defaults.conf` (which wins) in
   * `$WICK_CONF_DIR`, or `conf/`, those that exist.
   */
  propertiesFile?: string;
  env?: NodeJS.ProcessEnv;
  /** Command-line flags and the keys they set; those with an undefined value were not given. */
  flags?: readonly { flag: string; key: string; value: string | undefined }[];
}

/** A configuration and, for each key set, where it was set (`wick submit --verbose` prints it). */
export interface ResolvedConf {
  conf: WickConf;
  /** Key → its source: `--conf`, `properties file F`, `environment variable V` or a flag. */
  origins: ReadonlyMap<string, string>;
}

/**
 * Builds a daemon's or a command's configuration. Precedence, highest first: flags, `--conf`, the
 * properties file(s), environment variables, defaults. Within one source a key given under both
 * Spark's name and Wick's takes Wick's (a warning says so when they differ). Unknown keys and
 * SPARK_* variables Wick does not take are warned about, each once; a bad value of a known key
 * stops start-up with a message naming the key, the value, what is expected and where it was set.
 */
export function resolveConf(sources: ConfSources): ResolvedConf {
  const env = sources.env ?? process.env;
  const conf = new WickConf();
  const origins = new Map<string, string>();
  const layer = (pairs: readonly (readonly [string, string])[], from: string | string[]) => {
    // Spark's names first, so that Wick's own wins within the source; else a later pair wins.
    const indexed = pairs.map(([k, v], i) => ({ k, v, i, spark: wickKey(k) !== k }));
    const ordered = [...indexed.filter((p) => p.spark), ...indexed.filter((p) => !p.spark)];
    const given = new Map<string, { k: string; v: string }>();
    for (const { k, v, i, spark } of ordered) {
      const key = wickKey(k);
      const source = typeof from === 'string' ? from : (from[i] as string);
      const earlier = given.get(key);
      if (earlier && earlier.k !== k && earlier.v !== v) {
        log.warn(`${earlier.k}=${earlier.v} and ${k}=${v} are both set by ${source}: using ${k}`);
      }
      given.set(key, { k, v });
      conf.set(k, v);
      origins.set(key, spark ? `${source} (as ${k})` : source);
    }
  };
  const envPairs: [string, string][] = [];
  const envNames: string[] = [];
  for (const table of [SPARK_ENV_KEYS, ENV_KEYS]) {
    for (const [variable, key] of Object.entries(table)) {
      const v = env[variable];
      if (v === undefined || v === '') continue;
      envPairs.push([key, v]);
      envNames.push(`environment variable ${variable}`);
    }
  }
  layer(envPairs, envNames);
  const files =
    sources.propertiesFile !== undefined ? [sources.propertiesFile] : defaultPropertiesFiles(env);
  for (const file of files) layer(readPropertiesFile(file), `properties file ${file}`);
  const onCommandLine = (sources.confPairs ?? []).find((p) =>
    /^(wick|spark)\.authenticate\.secret=/.test(p),
  );
  if (onCommandLine) {
    // A command line is world-readable (ps, /proc/<pid>/cmdline); a file of one's own is not.
    log.warn(
      `WARNING: --conf ${onCommandLine.slice(0, onCommandLine.indexOf('='))}=… puts the cluster secret on this process's command line, which every user of this machine can read (ps, /proc/<pid>/cmdline) until Wick masks it there as it starts, and which a shell's history keeps. Put it in a file readable by you only and pass --conf wick.authenticate.secret.file=PATH instead, or save it with \`wick join --save\` in the default file, which every Wick process of this user finds.`,
    );
  }
  layer(
    (sources.confPairs ?? []).map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0) {
        throw new Error(
          `Invalid --conf "${pair}": expected key=value, e.g. --conf wick.worker.timeout=30s`,
        );
      }
      return [pair.slice(0, eq).trim(), pair.slice(eq + 1)] as const;
    }),
    '--conf',
  );
  for (const { flag, key, value } of sources.flags ?? []) {
    if (value !== undefined) {
      conf.set(key, value);
      origins.set(wickKey(key), flag);
    }
  }
  // A process its parent re-started with the same settings (submit/handOver.ts) says nothing
  // the parent said already: each unknown key is named once.
  if (env[CONF_WARNED_ENV] !== '1') {
    for (const key of conf.unknownKeys()) {
      log.warn(`Ignoring unknown configuration key ${key} (from ${origins.get(key)})`);
    }
    for (const line of ignoredSparkEnv(env)) log.warn(line);
  }
  try {
    conf.validate();
  } catch (err) {
    if (err instanceof ConfigError) {
      throw new ConfigError(err.key, err.value, `${err.reason} (set by ${origins.get(err.key)})`, {
        cause: err.cause,
      });
    }
    throw err;
  }
  return { conf, origins };
}

/** resolveConf's configuration alone: what a daemon runs with. */
export function loadConf(sources: ConfSources): WickConf {
  return resolveConf(sources).conf;
}

/** The default properties files that exist: DEFAULT_PROPERTIES_FILES in $WICK_CONF_DIR or conf/. */
export function defaultPropertiesFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env.WICK_CONF_DIR ?? 'conf';
  return DEFAULT_PROPERTIES_FILES.map((f) => join(dir, f)).filter((p) => existsSync(p));
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
