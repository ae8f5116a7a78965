/**
 * Spark's names for Wick's settings, so that a spark-defaults.conf, a `--conf spark.…` or a
 * spark-env.sh works as it is. A key `spark.x` is Wick's `wick.x` when Wick has that key, and a
 * few keys that Wick named otherwise are listed here; a bare number is read in Spark's unit where
 * Spark's differs from Wick's. A Spark name Wick does not have stays as it is, so that it is
 * warned about (and an application can still read a setting of its own).
 */

/** Spark keys whose Wick key is not simply `wick.` + the rest. */
export const SPARK_RENAMED_KEYS: Readonly<Record<string, string>> = {
  'spark.network.maxRemoteBlockSizeFetchToMem': 'wick.reducer.maxSizeFetchToMem',
  'spark.shuffle.spill.initialMemoryThreshold': 'wick.shuffle.spill.memoryThreshold',
  // Encryption (conf/ssl.ts). Spark's AES-based RPC encryption and its per-protocol TLS switches
  // are all Wick's one TLS 1.3 switch: Wick has one transport for RPC, files and shuffle, and
  // its web UIs serve the RPC port's certificate. (spark.ssl.enabled is wick.ssl.enabled as is.)
  'spark.network.crypto.enabled': 'wick.ssl.enabled',
  'spark.ssl.rpc.enabled': 'wick.ssl.enabled',
  'spark.ssl.ui.enabled': 'wick.ssl.enabled',
  'spark.ssl.standalone.enabled': 'wick.ssl.enabled',
  // Spark 4's PEM settings (its RPC TLS over OpenSSL): the same files Wick reads.
  'spark.ssl.certChain': 'wick.ssl.certFile',
  'spark.ssl.rpc.certChain': 'wick.ssl.certFile',
  'spark.ssl.privateKey': 'wick.ssl.keyFile',
  'spark.ssl.rpc.privateKey': 'wick.ssl.keyFile',
};

/**
 * Spark keys Wick refuses rather than ignores: each would change what is encrypted or with which
 * key, so a setting quietly dropped would leave the operator believing in a protection Wick does
 * not give. WickConf.validate() fails on them with this sentence.
 */
export const SPARK_REFUSED_KEYS: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ...['', 'rpc.', 'ui.', 'standalone.'].flatMap((p) =>
      [
        'keyStore',
        'keyStorePassword',
        'keyPassword',
        'keyStoreType',
        'trustStore',
        'trustStorePassword',
        'trustStoreType',
        'privateKeyPassword',
      ].map((k) => `spark.ssl.${p}${k}`),
    ),
  ]
    .map((k) => [
      k,
      'Wick reads PEM files, not Java key stores: export the certificate and its unencrypted key (openssl pkcs12 -in store.p12 -nokeys / -nocerts -nodes) and set wick.ssl.certFile and wick.ssl.keyFile; peers pin its fingerprint (wick.ssl.fingerprint) instead of trusting a store',
    ])
    .concat(
      ['spark.ssl.protocol', 'spark.ssl.enabledAlgorithms', 'spark.ssl.rpc.protocol'].map((k) => [
        k,
        'Wick speaks TLS 1.3 only, with the cipher suites Node offers for it: remove this setting',
      ]),
      [
        'spark.network.crypto.keyLength',
        'spark.network.crypto.keyFactoryAlgorithm',
        'spark.network.crypto.saslFallback',
        'spark.authenticate.enableSaslEncryption',
      ].map((k) => [
        k,
        "Wick encrypts with TLS 1.3 (wick.ssl.enabled), not Spark's AES or SASL scheme: remove this setting",
      ]),
    ),
);

/**
 * The unit of a bare number under Spark's name, where it is not Wick's default unit for the key:
 * Spark's spark.rpc.askTimeout=120 is seconds and spark.rpc.message.maxSize=128 is MiB.
 */
export const SPARK_BARE_UNITS: Readonly<Record<string, string>> = {
  'wick.rpc.askTimeout': 's',
  'wick.rpc.message.maxSize': 'm',
  // spark.history.*: Spark's time settings of the history server are in seconds.
  'wick.history.fs.update.interval': 's',
  'wick.history.fs.cleaner.interval': 's',
  'wick.history.fs.cleaner.maxAge': 's',
};

/**
 * The key Wick reads for `key`: `spark.x` → `wick.x` (or its renamed key) when `isKnown` says Wick
 * has it; any other key unchanged.
 */
export function wickKeyFor(key: string, isKnown: (key: string) => boolean): string {
  const renamed = SPARK_RENAMED_KEYS[key];
  if (renamed !== undefined) return renamed;
  if (!key.startsWith('spark.')) return key;
  const wick = `wick.${key.slice('spark.'.length)}`;
  return isKnown(wick) ? wick : key;
}

/** A value given under Spark's name, as Wick reads it under `wickKey`. */
export function wickValueFor(wickKey: string, value: string): string {
  const unit = SPARK_BARE_UNITS[wickKey];
  return unit !== undefined && /^\s*\d+\s*$/.test(value) ? `${value.trim()}${unit}` : value;
}

/**
 * spark-env.sh's variables, each read as Wick's WICK_* of the same key (load.ts). A WICK_* one
 * set too wins.
 */
export const SPARK_ENV_KEYS: Readonly<Record<string, string>> = {
  SPARK_MASTER_HOST: 'wick.master.host',
  SPARK_MASTER_PORT: 'wick.master.port',
  SPARK_MASTER_WEBUI_PORT: 'wick.master.ui.port',
  SPARK_WORKER_CORES: 'wick.worker.cores',
  SPARK_WORKER_MEMORY: 'wick.worker.memory',
  SPARK_WORKER_PORT: 'wick.worker.port',
  SPARK_WORKER_WEBUI_PORT: 'wick.worker.ui.port',
  SPARK_WORKER_DIR: 'wick.worker.dir',
  SPARK_LOCAL_DIRS: 'wick.local.dir',
};

/** SPARK_* variables that are not settings: never warned about (the launcher's: launcherEnv.ts). */
const SPARK_ENV_NOT_SETTINGS: ReadonlySet<string> = new Set([
  'SPARK_HOME',
  'SPARK_ENV_LOADED',
  'SPARK_SCALA_VERSION',
  // SPARK_WORKER_INSTANCES is left to warn: `wick worker` starts one, whatever it says.
  ...Object.entries(LAUNCHER_ENV)
    .filter(([what]) => what !== 'workerInstances')
    .flatMap(([, names]) => names),
]);

import { LAUNCHER_ENV } from './launcherEnv.js';

/** What to do instead, for the SPARK_* variables a Spark operator most often sets. */
const SPARK_ENV_HINTS: Readonly<Record<string, string>> = {
  SPARK_WORKER_INSTANCES: 'this starts one worker; `wick start-worker` starts one per instance',
  SPARK_LOCAL_IP: 'use --host (wick.master.host, wick.worker.host)',
  SPARK_MASTER_IP: 'use SPARK_MASTER_HOST or --host',
  SPARK_PUBLIC_DNS: 'use --host (wick.master.host, wick.worker.host)',
  SPARK_CONF_DIR:
    'Wick reads spark-defaults.conf and wick-defaults.conf from $WICK_CONF_DIR, default conf/',
};

/** The SPARK_* variables of `env` that Wick does not take, each with why it is ignored. */
export function ignoredSparkEnv(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter(
      (v) =>
        v.startsWith('SPARK_') &&
        env[v] !== undefined &&
        env[v] !== '' &&
        SPARK_ENV_KEYS[v] === undefined &&
        !SPARK_ENV_NOT_SETTINGS.has(v),
    )
    .sort()
    .map((v) => {
      const hint = SPARK_ENV_HINTS[v];
      return `Ignoring environment variable ${v}: Wick has no such setting${hint ? ` (${hint})` : ''}`;
    });
}
