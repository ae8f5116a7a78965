/**
 * The daemon launcher's environment variables (`wick start-*`, `wick start-all`: Spark's sbin/
 * scripts), each also taken under Spark's name (Wick's wins). They are not settings of a daemon:
 * they say where its files go and how many to start, before any properties file is read. Here in
 * conf/ so that the warning about SPARK_* variables Wick ignores (sparkNames.ts) knows them.
 */
export const LAUNCHER_ENV = {
  pidDir: ['WICK_PID_DIR', 'SPARK_PID_DIR'],
  logDir: ['WICK_LOG_DIR', 'SPARK_LOG_DIR'],
  ident: ['WICK_IDENT_STRING', 'SPARK_IDENT_STRING'],
  logMaxFiles: ['WICK_LOG_MAX_FILES', 'SPARK_LOG_MAX_FILES'],
  workerInstances: ['WICK_WORKER_INSTANCES', 'SPARK_WORKER_INSTANCES'],
  sshOpts: ['WICK_SSH_OPTS', 'SPARK_SSH_OPTS'],
  workersFile: ['WICK_WORKERS', 'SPARK_WORKERS'],
} as const;

/** The first of `names` set (non-empty) in `env`, with the name it was found under. */
export function launcherEnv(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}
