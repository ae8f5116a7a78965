/**
 * The names each command module registers (main.ts loads a module when one of its names runs).
 * dist/wick.cjs reads them too, before the CLI bundle is loaded: a compile cache per command.
 */
export const COMMAND_NAMES = {
  daemons: ['master', 'worker'],
  daemonControl: [
    'start-master',
    'start-worker',
    'stop-master',
    'stop-worker',
    'start-history-server',
    'stop-history-server',
  ],
  clusterScripts: ['start-all', 'stop-all', 'start-workers', 'stop-workers'],
  localCluster: ['local-cluster'],
  submit: ['submit'],
  kill: ['kill'],
  decommission: ['decommission'],
  driverWrapper: ['driver-wrapper'],
  status: ['status'],
  uiUrl: ['ui-url'],
  logs: ['logs'],
  executor: ['executor', 'executor-standby'],
  demo: ['demo', 'demo-server'],
  agent: ['agent'],
  join: ['join'],
  history: ['history', 'history-server'],
  token: ['token'],
} as const;

export const ALL_COMMAND_NAMES: ReadonlySet<string> = new Set(Object.values(COMMAND_NAMES).flat());

/**
 * The commands on the way from a submit to its first task, each built into a bundle of its own
 * (dist/cli/<file>, from backend/cli/bundles/) that holds only its code: such a process reads, and
 * V8 takes in, a third to a half of the whole CLI's 4.2 MB. Every other command runs from
 * dist/cli/main.cjs, which holds them all.
 */
export const OWN_BUNDLES = {
  submit: 'submit.cjs',
  executor: 'executor.cjs',
  driverWrapper: 'driver-wrapper.cjs',
} as const satisfies Partial<Record<keyof typeof COMMAND_NAMES, string>>;

/** The file in dist/cli/ that runs `command` (a compile cache key: see compileCacheKey). */
export function cliBundleOf(command: string): string {
  for (const [group, file] of Object.entries(OWN_BUNDLES)) {
    if ((COMMAND_NAMES[group as keyof typeof OWN_BUNDLES] as readonly string[]).includes(command))
      return file;
  }
  return 'main.cjs';
}
