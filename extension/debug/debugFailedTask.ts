/**
 * Debug Failed Task: a job failed because one task kept throwing. Its application runs again
 * under the debugger with the tasks inside the debugged process (master local[N], see
 * debugJob.ts), and a breakpoint at the throwing line stops there in the failing partition only:
 * its condition reads the partition of the task running on that thread (runTask's global
 * `wickTaskContext`, Spark's TaskContext.partitionId()).
 *
 * A condition rather than running that one task alone: the partition's input may come from a
 * shuffle, which the stages before it must compute anyway, and every task that does not reach
 * that line (or is in another partition) costs nothing more than the condition's check. The
 * partitions are the same as in the failed run when the application fixes their number (as
 * `parallelize(data, n)` or `reduceByKey(f, n)` do); a default number follows the executors'
 * cores (wick.default.parallelism), which local[N] may not match.
 */
import { existsSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import * as vscode from 'vscode';
import type { LoggedFailedTask, PastRun } from '../../backend/agent/protocol.js';
import type { DriverOutputs } from '../output/driverOutputs.js';
import { failureOf } from '../output/outcome.js';
import type { SourceLocation } from '../output/parseOutput.js';
import { DEBUG_TYPE, debugMaster } from './debugJob.js';
import { pastFailedTaskRun } from './pastFailedTask.js';

export const DEBUG_FAILED_TASK = 'Debug Failed Task';

/** What Debug Failed Task reruns, and where it stops. */
export interface FailedTaskRun {
  /** The application file to run again. */
  program: string;
  /** The throwing line, in the user's source. */
  location: SourceLocation;
  task: { stageId: number; partitionId: number };
}

export function failedTaskRun(
  program: string,
  o: { location?: SourceLocation; task?: FailedTaskRun['task'] },
): FailedTaskRun | undefined {
  return o.location && o.task ? { program, location: o.location, task: o.task } : undefined;
}

/** The breakpoint's condition: true on the failing partition's task alone. */
export function taskCondition(task: FailedTaskRun['task']): string {
  return `globalThis.wickTaskContext?.partitionId === ${task.partitionId}`;
}

/** From a notification (a FailedTaskRun) or the failed application's tree item. */
function runOf(arg: unknown, outputs: DriverOutputs): FailedTaskRun | undefined {
  const given = arg as Partial<FailedTaskRun> | undefined;
  if (given?.program && given.location && given.task) return given as FailedTaskRun;
  const app = (arg as { kind?: string; app?: { id: string } } | undefined)?.app;
  if (!app) return undefined;
  const failure = failureOf(app);
  if (!failure?.location || !failure.task) return undefined;
  // The file the editor submitted it from, else the file it failed in (often the same).
  const program = outputs.forApp(app.id)?.file ?? failure.location.file;
  return { program, location: failure.location, task: failure.task };
}

/** What a past run's Debug Failed Task asks the agent: its failed task, from its event log. */
export interface PastRunTasks {
  failedTask(appId: string): Promise<{ task?: LoggedFailedTask; reason?: string }>;
  /** Whether a stack frame's file is the user's (in the workspace, not Wick's own). */
  accept(file: string): boolean;
}

/** A file of the user's: there, not Wick's own build, in a workspace folder (as RunReports says). */
export function userFiles(wickRoot: string): (file: string) => boolean {
  const dist = join(wickRoot, 'dist') + sep;
  return (file) =>
    !file.startsWith(dist) &&
    existsSync(file) &&
    vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file)) !== undefined;
}

/**
 * A run of an earlier local cluster (its tree row): what the live command reads from the master
 * comes from the run's event log (pastFailedTask.ts); a value with why when it cannot.
 */
async function pastRunOf(
  arg: unknown,
  past: PastRunTasks,
): Promise<FailedTaskRun | { reason: string } | undefined> {
  const n = arg as { kind?: string; run?: PastRun } | undefined;
  if (n?.kind !== 'run' || !n.run) return undefined;
  const { task, reason } = await past.failedTask(n.run.appId);
  if (!task) return { reason: reason ?? `No failed task of ${n.run.appId} in its event log` };
  return pastFailedTaskRun(n.run, task, (f) => past.accept(f));
}

export function registerDebugFailedTask(
  outputs: DriverOutputs,
  past: PastRunTasks,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('wick.debugFailedTask', async (arg?: unknown) => {
      const fromLog = await pastRunOf(arg, past).catch((err: Error) => ({ reason: err.message }));
      if (fromLog && 'reason' in fromLog) {
        void vscode.window.showErrorMessage(`Wick: Debug Failed Task: ${fromLog.reason}`);
        return false;
      }
      const run = fromLog ?? runOf(arg, outputs);
      if (!run) {
        void vscode.window.showErrorMessage(
          "Wick: Debug Failed Task needs a failed application whose failure names a task and a line of your code (a job's task that kept throwing)",
        );
        return false;
      }
      const { location, task } = run;
      const bp = new vscode.SourceBreakpoint(
        new vscode.Location(
          vscode.Uri.file(location.file),
          new vscode.Position(location.line - 1, Math.max(0, location.column - 1)),
        ),
        true,
        taskCondition(task),
      );
      vscode.debug.addBreakpoints([bp]);
      const configured = debugMaster();
      const master = configured.startsWith('local[') ? configured : 'local[2]';
      const name = `Debug failed task (partition ${task.partitionId}) of ${basename(run.program)}`;
      // The breakpoint is this run's: it goes when its session ends.
      let ours: vscode.DebugSession | undefined;
      const started = vscode.debug.onDidStartDebugSession((s) => {
        if (!ours && s.name === name) ours = s;
      });
      const ended = vscode.debug.onDidTerminateDebugSession((s) => {
        if (s !== ours && s.parentSession !== undefined) return;
        if (ours && s !== ours) return;
        vscode.debug.removeBreakpoints([bp]);
        started.dispose();
        ended.dispose();
      });
      const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(run.program));
      const ok = await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE,
        request: 'launch',
        name,
        program: run.program,
        master,
      });
      if (!ok) {
        vscode.debug.removeBreakpoints([bp]);
        started.dispose();
        ended.dispose();
      }
      return ok;
    }),
  ];
}
