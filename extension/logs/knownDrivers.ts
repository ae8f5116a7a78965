/**
 * Which application each cluster-mode driver submitted from this window started (the submit's
 * answer has both ids; the master's state links them nowhere). The merged log adds the driver's
 * log to its app's; the tree names a driver after its app. In memory: a window's own submits.
 */
const MAX = 1000;
const appOfDriver = new Map<string, string>();
const driverOfApp = new Map<string, string>();

export function rememberDriver(appId: string, driverId: string): void {
  appOfDriver.set(driverId, appId);
  driverOfApp.set(appId, driverId);
  // Bounded like the master's retained lists: the oldest go first.
  for (const k of [...appOfDriver.keys()].slice(0, Math.max(0, appOfDriver.size - MAX))) {
    driverOfApp.delete(appOfDriver.get(k) as string);
    appOfDriver.delete(k);
  }
}

export const driverOf = (appId: string): string | undefined => driverOfApp.get(appId);
export const appOf = (driverId: string): string | undefined => appOfDriver.get(driverId);
