import type { Command } from 'commander';
import { AppConf } from '../conf/app.js';
import type { WickConf } from '../conf/WickConf.js';

/** Collects a repeatable option (`--conf a=b --conf c=d`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function addConfOptions(cmd: Command): Command {
  return cmd
    .option('--conf <key=value>', 'set a configuration value (repeatable)', collect, [])
    .option(
      '--properties-file <file>',
      'read configuration from this file (default: spark-defaults.conf and wick-defaults.conf in $WICK_CONF_DIR or conf/)',
    );
}

/**
 * Ends the process when its parent goes away: a daemon started by `wick local-cluster` (or a test)
 * gets a pipe on stdin and shuts down when it closes, so no daemon outlives whoever started it.
 */
export function exitWithParent(
  shutdown: () => Promise<void>,
  /**
   * False for a command that ends by itself (`wick submit`): watching stdin must not keep it
   * running once its work is done and the parent is still there.
   */
  keepsAlive = true,
): void {
  process.stdin.on('data', () => {});
  process.stdin.on('end', () => void shutdown());
  process.stdin.on('error', () => void shutdown());
  if (!keepsAlive) (process.stdin as { unref?: () => void }).unref?.();
}

/** Runs `shutdown` once on SIGINT or SIGTERM, then exits. */
export function onSignals(shutdown: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`Received ${signal}, shutting down\n`);
    shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

export function defaultMasterUrl(): string {
  return process.env.WICK_MASTER ?? 'wick://127.0.0.1:7077';
}

/**
 * The master a command talks to: --master, else wick.master (spark.master) from --conf or a
 * properties file, else $WICK_MASTER (which loadConf reads as wick.master), else the local one.
 */
export function masterUrlOf(flag: string | undefined, conf: WickConf): string {
  return flag ?? (conf.get(AppConf.master) || 'wick://127.0.0.1:7077');
}

/**
 * `--token-file <file>`: the user's submit token (`wick token create`), as
 * wick.authenticate.token.file (also WICK_TOKEN_FILE). After addConfOptions.
 */
export function addTokenOption(cmd: Command): Command {
  return cmd
    .option(
      '--token-file <file>',
      'prove this submit token (wick token create), not the cluster secret (default $WICK_TOKEN_FILE, then the cluster secret, then ~/.config/wick/token)',
    )
    .hook('preAction', (self) => {
      const { tokenFile, conf } = self.opts() as { tokenFile?: string; conf?: string[] };
      if (tokenFile !== undefined) {
        self.setOptionValue('conf', [...(conf ?? []), `wick.authenticate.token.file=${tokenFile}`]);
      }
    });
}
