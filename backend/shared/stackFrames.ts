import { isAbsolute, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SourceLocation } from '../protocol/common.js';

/**
 * Reading Node's stack traces as text: a task's failure reaches the driver as its executor's
 * stack, inside a message, so the frames are found in text rather than asked of V8. The first
 * frame in the user's own code is where an editor should point (AppFailure.location).
 */

export interface StackFrame {
  /** The function's name as printed, if any. */
  name?: string;
  file: string;
  line: number;
  column: number;
}

// `    at name (file:line:col)`, `    at file:line:col`, `    at async name (file:line:col)`;
// the file of an eval'd frame is left out (`eval at …`), as it names no file.
const FRAME = /^\s*at (?:(.*?) \()?((?:file:\/\/)?[^()\s][^()]*?):(\d+):(\d+)\)?\s*$/;

/** The frames of every stack in `text`, in order (the lines that are not frames skipped). */
export function parseStackFrames(text: string): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const line of text.split('\n')) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const [, name, rawFile, ln, col] = m;
    let file = rawFile as string;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    const frame: StackFrame = { file, line: Number(ln), column: Number(col) };
    if (name) frame.name = name;
    frames.push(frame);
  }
  return frames;
}

/** Where Wick's own code runs from (its dist folder), and any other folder that is not the user's. */
export interface NotUserCode {
  dirs: readonly string[];
}

/**
 * Whether a frame is in the user's code: an absolute path (not `node:…`, not a name such as
 * `wick-task-pipeline.js` or `<anonymous>`), not under node_modules, not in Wick's own folders,
 * and not the compiled copy of the application in a code tree (`/…/wick-submit-…/`,
 * `/…/wick-executor-…/code-…/`): a source-mapped stack names the original instead, and an
 * unmapped one has nothing better to offer an editor.
 */
export function isUserFrame(frame: StackFrame, not: NotUserCode): boolean {
  const f = frame.file;
  if (!isAbsolute(f)) return false;
  const parts = f.split(sep);
  if (parts.includes('node_modules')) return false;
  if (parts.some((p) => p.startsWith('wick-submit-') || p.startsWith('wick-executor-'))) {
    return false;
  }
  return !not.dirs.some((d) => f === d || f.startsWith(d.endsWith(sep) ? d : d + sep));
}

/** The first frame of `text`'s stacks in the user's code, as a location; undefined if none is. */
export function firstUserFrame(text: string, not: NotUserCode): SourceLocation | undefined {
  for (const frame of parseStackFrames(text)) {
    if (isUserFrame(frame, not) && frame.line >= 1 && frame.column >= 1) {
      return { file: frame.file, line: frame.line, column: frame.column };
    }
  }
  return undefined;
}

/**
 * The stack text a user reads: each run of frames in Wick's own code (its workings, which say
 * nothing about the user's code) becomes one line saying how many there were; the user's frames,
 * Node's (readable names) and every line that is not a frame stay as they are.
 */
export function collapseWickFrames(text: string, not: NotUserCode): string {
  const out: string[] = [];
  let run = 0;
  let indent = '    ';
  const flush = () => {
    if (run > 0)
      out.push(`${indent}… ${run} frame${run === 1 ? '' : 's'} in Wick (WICK_DEBUG=1 shows them)`);
    run = 0;
  };
  for (const line of text.split('\n')) {
    const [frame] = parseStackFrames(line);
    const internal =
      frame !== undefined &&
      not.dirs.some((d) => frame.file.startsWith(d.endsWith(sep) ? d : d + sep));
    if (internal) {
      if (run === 0) indent = /^\s*/.exec(line)?.[0] ?? indent;
      run++;
      continue;
    }
    flush();
    out.push(line);
  }
  flush();
  return out.join('\n');
}
