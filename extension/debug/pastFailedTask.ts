/**
 * Debug Failed Task for a run of an earlier local cluster (kept across a reload or a restart):
 * its master is gone, so what the live command reads from the master's AppFailure (the throwing
 * line and the failing task) comes from the run's event log instead, as the agent read it
 * (backend/agent/failedTaskFromLog.ts): the last failed job's failing task, its stage and
 * partition, and its error, whose first frame in the user's code is the line to stop at.
 * Pure: no vscode import (test/extension/debug/pastFailedTask.test.ts).
 */
import type { LoggedFailedTask, PastRun } from '../../backend/agent/protocol.js';
import { firstUserFrame } from '../output/parseOutput.js';
import type { FailedTaskRun } from './debugFailedTask.js';

export function pastFailedTaskRun(
  run: Pick<PastRun, 'appId' | 'file'>,
  logged: LoggedFailedTask,
  /** Whether a frame's file is the user's (in the workspace, not Wick's own). */
  accept: (file: string) => boolean,
): FailedTaskRun | { reason: string } {
  const location = firstUserFrame(logged.error, accept);
  if (!location)
    return {
      reason: `The failed task of ${run.appId} (stage ${logged.stageId}, partition ${logged.partitionId}) threw outside your code, as its event log tells: ${firstLine(logged.error)}`,
    };
  return {
    // The file the editor submitted it from, else the file it failed in (often the same).
    program: run.file ?? location.file,
    location,
    task: { stageId: logged.stageId, partitionId: logged.partitionId },
  };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
}
