import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { withMaster } from '../client/masterConnection.js';
import { CONF_WARNED_ENV } from '../conf/load.js';
import { WickConf } from '../conf/WickConf.js';
import { RequestSubmissionKey } from '../protocol/tokens.js';
import { APP_CREDENTIAL_ENV, deriveKey, formatCredential } from '../rpc/credentials.js';
import { resolveClientCredential } from '../rpc/userToken.js';

/**
 * A client-mode driver runs in this very process, so before it starts its submitter's credential
 * makes way for a submission's key (credentials.ts): the application can register itself and
 * talk to its executors, and nothing else. With the cluster secret the key is derived here; with
 * a user's token the master is asked for one (RequestSubmissionKey), which it records as that
 * token's. Nothing changes in a cluster that runs open, or when a key was handed already (the
 * re-exec below).
 */
export async function handOverToDriver(
  conf: Record<string, string>,
  masterUrl: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (env[APP_CREDENTIAL_ENV]) {
    delete env.WICK_AUTH_SECRET;
    return;
  }
  const found = resolveClientCredential(new WickConf(conf), env);
  delete env.WICK_AUTH_SECRET;
  if (found.secret !== undefined) {
    const id = `submission-${randomBytes(12).toString('hex')}`;
    env[APP_CREDENTIAL_ENV] = formatCredential({
      kind: 'submission',
      id,
      key: deriveKey(found.secret, 'submission', id),
    });
    return;
  }
  if (found.credential?.kind === 'token' && masterUrl !== undefined) {
    const given = await withMaster(
      masterUrl,
      (master) => master.ask(RequestSubmissionKey({})),
      new WickConf(conf),
    );
    env[APP_CREDENTIAL_ENV] = formatCredential({ kind: 'submission', ...given });
  }
}

/** `--conf wick.authenticate.secret=…` (or `--conf=…`), as it stands on a command line. */
function secretInArgs(args: readonly string[]): boolean {
  return args.some(
    (a) => /wick\.authenticate\.secret=/.test(a) || /spark\.authenticate\.secret=/.test(a),
  );
}

/** The command line without `--conf <secret setting>` pairs. */
function withoutSecretArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--conf' && i + 1 < args.length && secretInArgs([args[i + 1] as string])) {
      i++;
      continue;
    }
    if (secretInArgs([a])) continue;
    out.push(a);
  }
  return out;
}

/**
 * The environment a process starts with stays readable in /proc/<pid>/environ (and its command
 * line in /proc/<pid>/cmdline) whatever it later deletes from process.env. So a client-mode
 * submit that was given the secret there (WICK_AUTH_SECRET, or --conf wick.authenticate.secret=)
 * runs the application in a child started without it, holding only the submission's key the
 * parent derived; the parent waits, passes signals on and exits as the child does. True when it
 * did (the caller then does nothing more); false when there is nothing to hide.
 */
export async function reexecWithoutSecret(
  conf: Record<string, string>,
  masterUrl: string | undefined,
): Promise<boolean> {
  const args = process.argv.slice(1);
  if (!process.env.WICK_AUTH_SECRET && !secretInArgs(args)) return false;
  const env: NodeJS.ProcessEnv = { ...process.env };
  await handOverToDriver(conf, masterUrl, env);
  delete env.WICK_AUTH_SECRET;
  env[CONF_WARNED_ENV] = '1';
  // The launcher's fd (WICK_LAUNCHER_FD, the agent's progress pipe) goes to the child too.
  const stdio: ('inherit' | 'ignore' | number)[] = ['inherit', 'inherit', 'inherit'];
  const launcherFd = Number(env.WICK_LAUNCHER_FD);
  if (Number.isInteger(launcherFd) && launcherFd > 2 && launcherFd < 64) {
    while (stdio.length < launcherFd) stdio.push('ignore');
    stdio[launcherFd] = launcherFd;
  }
  const child = spawn(process.execPath, [...process.execArgv, ...withoutSecretArgs(args)], {
    env,
    stdio,
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  const code = await new Promise<number>((resolve) => {
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 128 + 15 : 1)));
    child.on('error', () => resolve(1));
  });
  process.exitCode = code;
  return true;
}
