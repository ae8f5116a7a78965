import { getLogger } from '../util/log.js';
import { type StartupSecrets, startupSecrets } from './startupSecrets.js';

const log = getLogger('Wick');

/**
 * A loud warning where the cluster secret was given in a daemon's environment. The daemon masks
 * it in what /proc/<pid>/environ shows (startupSecrets.ts), but not in what started it, and where
 * it cannot mask it the secret stays readable by every process of the same user for as long as
 * the daemon runs. A file readable by its owner only is the one place that is neither
 * (docs/security.md).
 */
export function secretInEnvironment(
  role: 'master' | 'worker',
  found: StartupSecrets = startupSecrets(),
  user: string = process.env.USER ?? 'this user',
): string | undefined {
  if (!found.given.includes('environment')) return undefined;
  const instead = `Prefer a secret file: \`wick join --save\` on this machine asks for the secret and keeps it in ~/.config/wick/cluster-secret (readable by you only), then start the ${role} without WICK_AUTH_SECRET.`;
  if (found.unmasked === undefined) {
    return `WICK_AUTH_SECRET was given in this ${role}'s environment. The ${role} masked it in /proc/${process.pid}/environ, but what started it may still hold it (a shell's history, a unit file, a parent process's environment). ${instead}`;
  }
  return `WICK_AUTH_SECRET is in this ${role}'s environment, where it stays for as long as the ${role} runs (/proc/${process.pid}/environ), readable by every process of user ${user} that is not confined: it could not be masked (${found.unmasked}). ${instead}`;
}

/**
 * Logs the warning if it applies, in a daemon's start-up output. (A secret on the command line is
 * warned of by loadConf, for every command.)
 */
export function warnAboutExposedSecret(role: 'master' | 'worker'): void {
  const w = secretInEnvironment(role);
  if (w) log.warn(`WARNING: ${w}`);
}
