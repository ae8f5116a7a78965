/**
 * The runs of a submitted driver. A supervised driver whose worker was lost runs again under a new
 * id (SPARK-19900: see master/handlers/drivers.ts), whose record names the one it replaces
 * (`relaunchedFrom`): the id a submit printed stays the user's handle, and every program that
 * takes it (wait for its end, kill it, read its log) follows the links to its latest run.
 */

interface Run {
  id: string;
  relaunchedFrom?: string;
}

/** The run that replaced `id`, if any. */
export function relaunchOf<D extends Run>(drivers: readonly D[], id: string): D | undefined {
  return drivers.find((d) => d.relaunchedFrom === id);
}

/** The latest run of the driver `id`: itself, or what replaced it, and so on; undefined if unknown. */
export function latestRun<D extends Run>(drivers: readonly D[], id: string): D | undefined {
  let run = drivers.find((d) => d.id === id);
  const seen = new Set<string>();
  while (run && !seen.has(run.id)) {
    seen.add(run.id);
    const next = relaunchOf(drivers, run.id);
    if (!next) break;
    run = next;
  }
  return run;
}
