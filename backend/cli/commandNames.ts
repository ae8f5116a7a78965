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
