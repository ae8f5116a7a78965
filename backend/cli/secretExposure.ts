import { getLogger } from '../util/log.js';

const log = getLogger('Wick');

/**
 * A loud warning where the cluster secret was put where others can read it. An environment is readable by every process of the
 * same user for as long as the process runs (/proc/<pid>/environ is the environment it was
 * started with: deleting the variable later does not change it). A file readable by its owner
 * only is the one place that is neither (docs/security.md).
 */
export function secretInEnvironment(
  role: 'master' | 'worker',
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!env.WICK_AUTH_SECRET) return undefined;
  return `WICK_AUTH_SECRET is in this ${role}'s environment, where it stays for as long as the ${role} runs (/proc/${process.pid}/environ), readable by every process of user ${env.USER ?? 'this user'} that is not confined. Prefer a secret file: \`wick join --save\` on this machine asks for the secret and keeps it in ~/.config/wick/cluster-secret (readable by you only), then start the ${role} without WICK_AUTH_SECRET.`;
}

/**
 * Logs the warning if it applies, in a daemon's start-up output. (A secret on the command line is
 * warned of by loadConf, for every command.)
 */
export function warnAboutExposedSecret(role: 'master' | 'worker'): void {
  const w = secretInEnvironment(role);
  if (w) log.warn(`WARNING: ${w}`);
}
