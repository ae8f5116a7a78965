/**
 * Reading a driver's output for what went wrong: the stack frames Node prints
 * (`    at name (/abs/file.ts:7:11)`), the driver's own `wick: <error>` line, and the one-line
 * syntax errors of a submit (`<file>:<line>:<column>: error: <message>`, esbuild's form, or the
 * older `wick: Syntax error in <file>:<line>:<column>: <message>`). Pure: no vscode import, so
 * test/extension/output/parseOutput.test.ts runs it as is. Lines and columns are 1-based, as
 * printed.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

export interface SyntaxProblem extends SourceLocation {
  message: string;
}

/** The longest line looked at: a frame or an error line longer than this is not one. */
const MAX_LINE = 8192;

// `    at name (loc)`, `    at async name (loc)`, `    at loc`; loc = file:line:column.
const FRAME = /^\s+at (?:.*? \()?((?:file:\/\/)?[^\s()][^()]*?):(\d+):(\d+)\)?\s*$/;
const ESBUILD = /^(?:✘ \[ERROR\] )?(.+?):(\d+):(\d+): (?:error|ERROR): (.+)$/;
const WICK_SYNTAX = /^wick: Syntax error in (.+?):(\d+):(\d+): (.+)$/;
const WICK_ERROR = /^wick: (.+)$/;

function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.length <= MAX_LINE);
}

/** Every stack frame's location, in order; frames without a file (native, eval) are left out. */
export function stackFrames(text: string): SourceLocation[] {
  const out: SourceLocation[] = [];
  for (const l of lines(text)) {
    const m = FRAME.exec(l);
    if (!m) continue;
    let file = m[1] as string;
    if (file.startsWith('file://')) {
      try {
        file = fileURLToPath(file);
      } catch {
        continue;
      }
    }
    out.push({ file, line: Number(m[2]), column: Number(m[3]) });
  }
  return out;
}

/**
 * Where the user's code is in a frame list: an absolute file that is not Node's own
 * (`node:internal/…`), not a dependency's (`node_modules`), and that `accept` takes (the caller
 * knows the workspace and where Wick itself is installed).
 */
export function firstUserFrame(
  text: string,
  accept: (file: string) => boolean = () => true,
): SourceLocation | undefined {
  return stackFrames(text).find(
    (f) =>
      isAbsolute(f.file) &&
      !f.file.split('/').includes('node_modules') &&
      f.line >= 1 &&
      accept(f.file),
  );
}

/**
 * The syntax errors a submit printed, each with an absolute file (a relative one is resolved
 * against `cwd`, the folder the submit ran in).
 */
export function syntaxProblems(text: string, cwd: string): SyntaxProblem[] {
  const out: SyntaxProblem[] = [];
  for (const l of lines(text)) {
    const m = WICK_SYNTAX.exec(l) ?? (l.startsWith('wick: ') ? null : ESBUILD.exec(l));
    if (!m) continue;
    const line = Number(m[2]);
    if (line < 1) continue;
    out.push({
      file: resolve(cwd, m[1] as string),
      line,
      column: Math.max(1, Number(m[3])),
      message: (m[4] as string).trim(),
    });
  }
  return out;
}

/** The driver's last `wick: <error>` line, without the prefix. */
export function lastWickError(text: string): string | undefined {
  let found: string | undefined;
  for (const l of lines(text)) {
    const m = WICK_ERROR.exec(l);
    if (m) found = (m[1] as string).trim();
  }
  return found;
}

/** The last line with something on it: what a driver that exited without a `wick:` line said last. */
export function lastLine(text: string): string | undefined {
  const all = lines(text.trimEnd());
  for (let i = all.length - 1; i >= 0; i--) if ((all[i] as string).trim()) return all[i]?.trim();
  return undefined;
}

/** Wick's own log lines (`26/11/30 03:40:01 INFO Master: …`): not the application's answer. */
const WICK_LOG_LINE = /^\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) /;
/** The console progress bar's frames (`[Stage 3:==>  (1 + 2) / 4]`), drawn over with \r. */
const PROGRESS_FRAME = /^\s*\[Stage \d+/;

/**
 * What the application said last (at most `max` lines, at most `maxChars` in all): the answer
 * a finished run's notification quotes. Wick's log lines and progress frames are not its words.
 */
export function answerLines(text: string, max = 3, maxChars = 300): string[] {
  const out: string[] = [];
  let chars = 0;
  const all = lines(text.trimEnd());
  for (let i = all.length - 1; i >= 0 && out.length < max; i--) {
    // A line redrawn with \r shows its last frame.
    const line = (all[i] as string).split('\r').pop()?.trim() ?? '';
    if (!line || WICK_LOG_LINE.test(line) || PROGRESS_FRAME.test(line)) continue;
    if (chars + line.length > maxChars) {
      if (out.length === 0) out.unshift(`${line.slice(0, maxChars - 1)}…`);
      break;
    }
    chars += line.length;
    out.unshift(line);
  }
  return out;
}

/** The first line of a message (an error's stack follows it). */
export function firstLine(message: string): string {
  return message.split(/\r?\n/, 1)[0] ?? message;
}
