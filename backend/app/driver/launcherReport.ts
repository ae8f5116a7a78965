import { closeSync, writeSync } from 'node:fs';

/**
 * Tells whoever launched a driver which application it registered: when the launcher passes a
 * pipe to `wick submit` and names its descriptor in WICK_LAUNCHER_FD (the VS Code agent does, in
 * client mode), the first WickContext to register writes `{"appId": "app-…"}` and a newline to it,
 * and closes it. The launcher then knows its app for sure, where matching the master's new
 * applications by name could take another submit's. (Spark's launcher library has its child report
 * back the same way, over a socket.)
 */
let launcherFd: number | undefined;

/**
 * Takes the launcher's descriptor out of the environment (`wick submit` does, before it starts
 * anything): a process started from here on must not write to a descriptor that is not its own.
 */
export function takeLauncherFd(env: NodeJS.ProcessEnv = process.env): void {
  const raw = env.WICK_LAUNCHER_FD;
  delete env.WICK_LAUNCHER_FD;
  const fd = Number(raw);
  if (raw !== undefined && Number.isInteger(fd) && fd > 2) launcherFd = fd;
}

/**
 * Tells the launcher that a phase of the submit is done (`{"phase": "bundled"}` and a newline),
 * before the app id; the launcher shows it as progress. Never throws.
 */
export function reportPhaseToLauncher(phase: 'bundled'): void {
  if (launcherFd === undefined) return;
  try {
    writeSync(launcherFd, `${JSON.stringify({ phase })}\n`);
  } catch {
    // The launcher is gone: nobody to tell.
  }
}

/** Reports the registered application to the launcher, once; never throws. */
export function reportToLauncher(appId: string): void {
  const fd = launcherFd;
  launcherFd = undefined;
  if (fd === undefined) return;
  try {
    writeSync(fd, `${JSON.stringify({ appId })}\n`);
    closeSync(fd);
  } catch {
    // The launcher is gone, or never gave this descriptor: nobody to tell.
  }
}
