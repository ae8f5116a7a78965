import type { Command } from 'commander';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { Agent } from '../../agent/Agent.js';
import {
  CheckApplication,
  Connect,
  Disconnect,
  DriverExited,
  DriverOutput,
  FollowLog,
  Kill,
  LogChunk,
  LogFollowEnded,
  PastRunsChanged,
  RequestAppStatusApiOf,
  RequestLogRange,
  RequestPastRunFailedTask,
  RequestPastRunLog,
  RequestPastRuns,
  RequestStatus,
  RequestUiLink,
  RequestWorkerStateOf,
  StateChanged,
  StopFollowLog,
  SubmitApplication,
  SubmitProgress,
} from '../../agent/protocol.js';
import { WickConf } from '../../conf/WickConf.js';
import { removeDeadOwnerDirs } from '../../util/deadOwnerDirs.js';
import { version } from '../../util/version.js';
import { loggedRunPages } from './loggedRunPages.js';

/**
 * `wick agent`: the backend of the VS Code extension, spoken to over stdio by
 * vscode-languageclient as a plain JSON-RPC transport (no documents, no language features).
 * When the connection closes (the window went away, or the client stopped it) it stops the local
 * cluster it started and exits, leaving no process.
 */
export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('The VS Code extension’s backend (JSON-RPC over stdio; not for direct use)')
    .option('--stdio', 'talk over stdin/stdout (the default; vscode-languageclient passes it)')
    .action(async () => {
      const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
      const agent = new Agent(
        {
          stateChanged: (conn, state) =>
            void connection.sendNotification(StateChanged, {
              connection: conn,
              state,
              at: Date.now(),
            }),
          logChunk: (followId, offset, data) =>
            void connection.sendNotification(LogChunk, { followId, offset, data }),
          logFollowEnded: (followId, totalSize, reason) =>
            void connection.sendNotification(LogFollowEnded, { followId, totalSize, reason }),
          driverOutput: (outputId, stream, data) =>
            void connection.sendNotification(DriverOutput, { outputId, stream, data }),
          driverExited: (outputId, exitCode, reason) =>
            void connection.sendNotification(DriverExited, { outputId, exitCode, reason }),
          log: (line) => connection.console.log(line),
          submitProgress: (outputId, message) =>
            void connection.sendNotification(SubmitProgress, { outputId, message }),
          pastRunsChanged: (runs) => void connection.sendNotification(PastRunsChanged, { runs }),
        },
        loggedRunPages(new WickConf()),
      );
      let exiting = false;
      const exit = (code: number) => {
        if (exiting) return;
        exiting = true;
        void agent.shutdown().finally(() => process.exit(code));
      };
      connection.onInitialize(() => ({
        capabilities: {},
        serverInfo: { name: 'wick-agent', version },
      }));
      // What agents that were killed (a crashed window, SIGKILL) left in the temp folder: their
      // local cluster's work dir and their client-mode drivers' output.
      void Promise.all([removeDeadOwnerDirs('wick-vscode'), removeDeadOwnerDirs('wick-agent')]);
      connection.onRequest(Connect, (p) => agent.connect(p));
      connection.onRequest(Disconnect, (p) => agent.disconnect(p.stopLocalCluster));
      connection.onRequest(RequestStatus, () => ({
        ...agent.status,
        pid: process.pid,
        rssBytes: process.memoryUsage().rss,
      }));
      connection.onRequest(SubmitApplication, (p) => agent.submit(p));
      connection.onRequest(CheckApplication, (p) => agent.check(p));
      connection.onRequest(Kill, (p) => agent.kill(p.id));
      connection.onRequest(RequestPastRuns, async () => ({ runs: await agent.pastRuns() }));
      connection.onRequest(RequestPastRunLog, (p) => agent.pastRunLog(p?.appId));
      connection.onRequest(RequestPastRunFailedTask, (p) => agent.pastRunFailedTask(p?.appId));
      connection.onRequest(RequestUiLink, (p) => agent.uiLink(p));
      connection.onRequest(RequestWorkerStateOf, (p) => agent.workerState(p.workerId));
      connection.onRequest(RequestAppStatusApiOf, (p) => agent.appStatusApi(p.path));
      connection.onRequest(RequestLogRange, (p) => agent.logRange(p));
      connection.onRequest(FollowLog, (p) => agent.followLog(p));
      connection.onNotification(StopFollowLog, (p) => agent.stopFollowLog(p.followId));
      connection.onShutdown(() => agent.shutdown());
      process.on('exit', () => agent.removeTempDirsNow());
      connection.onExit(() => exit(0));
      process.stdin.on('close', () => exit(0));
      process.on('SIGTERM', () => exit(0));
      connection.listen();
      await new Promise(() => {});
    });
}
