import { COMMAND_NAMES as N } from './commandNames.js';
import { type CommandModule, runProgram } from './program.js';

/**
 * Every command's module, by the names it registers. Each is loaded only when its command runs
 * (esbuild starts a module of the bundle on its first import): an executor, a driver or
 * `wick status` starts without running the master, the web UI or the agent, and start-up is most
 * of a submit's wait.
 */
const COMMANDS: readonly CommandModule[] = [
  [N.daemons, async () => (await import('./commands/daemons.js')).registerDaemons],
  [
    N.daemonControl,
    async () => (await import('./commands/daemonControl.js')).registerDaemonControl,
  ],
  [
    N.clusterScripts,
    async () => (await import('./commands/clusterScripts.js')).registerClusterScripts,
  ],
  [N.localCluster, async () => (await import('./commands/localCluster.js')).registerLocalCluster],
  [N.submit, async () => (await import('./commands/submit.js')).registerSubmit],
  [N.kill, async () => (await import('./commands/kill.js')).registerKill],
  [N.decommission, async () => (await import('./commands/decommission.js')).registerDecommission],
  [
    N.driverWrapper,
    async () => (await import('./commands/driverWrapper.js')).registerDriverWrapper,
  ],
  [N.status, async () => (await import('./commands/status.js')).registerStatus],
  [N.uiUrl, async () => (await import('./commands/uiUrl.js')).registerUiUrl],
  [N.logs, async () => (await import('./commands/logs.js')).registerLogs],
  [N.executor, async () => (await import('./commands/executor.js')).registerExecutor],
  [N.demo, async () => (await import('./commands/demo.js')).registerDemo],
  [N.agent, async () => (await import('./commands/agent.js')).registerAgent],
  [N.join, async () => (await import('./commands/join.js')).registerJoin],
  [N.history, async () => (await import('./commands/history.js')).registerHistory],
  [N.token, async () => (await import('./commands/token.js')).registerToken],
];

runProgram(COMMANDS);
