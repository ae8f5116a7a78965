/**
 * The last lines of a log file, bounded in lines and bytes: what a worker quotes when an executor
 * exits by itself with an error, so that whoever reads the message learns why without fetching
 * the log (and a long stack trace cannot make the message large).
 */
import type { LogSource } from './logFiles.js';
import { readLogSetRange } from './logSet.js';
import type { MadeLogs } from './madeLogs.js';

export interface TailLimits {
  maxLines: number;
  maxBytes: number;
}

/** What an executor's ExecutorStateChanged quotes of its stderr. */
export const EXECUTOR_STDERR_TAIL: TailLimits = { maxLines: 10, maxBytes: 2048 };

/**
 * The native stack trace Node prints after a fatal error (` 1: 0xb78db3 node::OOMErrorHandler…`
 * and its heading): a dozen long lines after the one that says what happened ("FATAL ERROR: …
 * JavaScript heap out of memory"), which would push it out of the tail.
 */
const NODE_NATIVE_STACK = /^(?:\s*\d+: 0x[0-9a-f]+\b|----- Native stack trace -----$)/;

/**
 * The last complete lines of `text` within the limits, without the command header a worker writes
 * at the top of a child's stderr (it names the command, not what went wrong) and without blank
 * lines. `cut` says the text starts mid-file, so its first line is partial and dropped.
 */
export function lastLines(text: string, limits: TailLimits, cut = false): string {
  // The header ends with a line of 40 '=' (backend/worker/process/launch.ts).
  const header = text.lastIndexOf(`${'='.repeat(40)}\n`);
  let body = header >= 0 ? text.slice(header + 41) : text;
  if (cut && header < 0) body = body.slice(body.indexOf('\n') + 1);
  const lines = body.split('\n').filter((l) => l.trim() !== '' && !NODE_NATIVE_STACK.test(l));
  let kept = lines.slice(-limits.maxLines);
  while (kept.length > 1 && Buffer.byteLength(kept.join('\n')) > limits.maxBytes) {
    kept = kept.slice(1);
  }
  const out = kept.join('\n');
  // One line longer than the limit keeps its end, where the error usually is.
  return Buffer.byteLength(out) > limits.maxBytes
    ? `…${Buffer.from(out).subarray(-limits.maxBytes).toString('utf8')}`
    : out;
}

/** The tail of a log, across its rolled files (see lastLines); '' when it is missing or empty. */
export async function readLogTail(
  workDir: string,
  source: LogSource,
  limits: TailLimits,
): Promise<string> {
  try {
    // More than the bytes kept: lines dropped for the limit (a native stack trace, say) still
    // leave enough whole lines.
    const range = await readLogSetRange(workDir, source, undefined, limits.maxBytes * 8);
    return lastLines(range.data.toString('utf8'), limits, range.offset > 0);
  } catch {
    return '';
  }
}

/**
 * As readLogTail, for a log of the work dir that must be the one the worker made (madeLogs.ts),
 * across its rolled files:
 * the tail goes into the executor's state, which every UI shows; '' for anything else.
 */
export async function readMadeLogTail(
  workDir: string,
  src: LogSource,
  limits: TailLimits,
  made: MadeLogs,
): Promise<string> {
  try {
    const range = await readLogSetRange(workDir, src, undefined, limits.maxBytes * 8, made);
    return lastLines(range.data.toString('utf8'), limits, range.offset > 0);
  } catch {
    return '';
  }
}
