import { dirname, join } from 'node:path';
import { MAX_FAILURE_MESSAGE_LENGTH, MAX_FAILURE_STACK_LENGTH } from '../../protocol/bounds.js';
import type { AppFailure, FailedTask } from '../../protocol/common.js';
import { collapseWickFrames, firstUserFrame, type NotUserCode } from '../../shared/stackFrames.js';
import { distFile } from '../../util/paths.js';

/**
 * What a driver tells the master when its application fails (UnregisterApplication's `failure`):
 * the error as `<name>: <message>`, its stack, and the line of the user's code it points at. A
 * job's failure quotes its task's stack (the executor's, source-mapped there) in the message,
 * ahead of the driver's own frames: the task's throw is the line that caused it.
 */
export function describeFailure(err: unknown, not: NotUserCode = wickCode()): AppFailure {
  const e = err instanceof Error ? err : undefined;
  const text = e ? `${e.name}: ${e.message}` : `Uncaught ${describeValue(err)}`;
  const failure: AppFailure = { message: cut(text, MAX_FAILURE_MESSAGE_LENGTH) };
  const stack = e?.stack;
  if (stack) failure.stack = cut(stack, MAX_FAILURE_STACK_LENGTH);
  const location = firstUserFrame(`${e?.message ?? ''}\n${stack ?? ''}`, not);
  if (location && location.file.length <= 4096) failure.location = location;
  const task = failedTaskOf(err);
  if (task) failure.task = task;
  return failure;
}

/** The failed task a job's error names (JobFailedError.failedTask), itself or as its cause. */
function failedTaskOf(err: unknown): FailedTask | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const t = (e as { failedTask?: FailedTask }).failedTask;
    if (t && Number.isInteger(t.stageId) && Number.isInteger(t.partitionId))
      return { stageId: t.stageId, partitionId: t.partitionId };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A driver whose process exits (or is set to exit) with a non-zero status, nothing thrown. */
export function exitFailure(code: number): AppFailure {
  return { message: `Error: the driver exited with status ${code}` };
}

/**
 * The failure as the driver prints it (docs/protocol.md): `<name>: <message>` and the stack's
 * frames; Node's stack already starts with the name and message.
 */
export function formatFailure(err: unknown): string {
  if (!(err instanceof Error)) return `Uncaught ${describeValue(err)}`;
  const head = `${err.name}: ${err.message}`;
  const stack = err.stack ?? '';
  let text: string;
  if (stack.startsWith(head)) text = stack;
  else {
    const frames = stack
      .split('\n')
      .filter((l) => /^\s+at /.test(l))
      .join('\n');
    text = frames ? `${head}\n${frames}` : head;
  }
  // Wick's own frames are its workings, not the user's code: one line says how many, unless asked.
  return process.env.WICK_DEBUG ? text : collapseWickFrames(text, wickCode());
}

let wickDirs: NotUserCode | undefined;

/** Wick's own code: its build, and its sources when it runs from them (the tests do). */
export function wickCode(): NotUserCode {
  if (wickDirs) return wickDirs;
  let dist: string;
  try {
    dist = dirname(distFile('wick.cjs'));
  } catch {
    dist = join(import.meta.dirname ?? __dirname, '..', '..', '..', 'dist');
  }
  const root = dirname(dist);
  wickDirs = { dirs: [dist, join(root, 'backend'), join(root, 'bin')] };
  return wickDirs;
}

function describeValue(v: unknown): string {
  try {
    return typeof v === 'string' ? JSON.stringify(v) : String(v);
  } catch {
    return typeof v;
  }
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
