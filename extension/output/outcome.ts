/**
 * How a submitted run ended, as the user is told: failed or not, the error's first line, where
 * it points, and the Problems entries. From what the master says (the app's state and, once the
 * driver reports it, its `failure`), the driver's exit and its output, in that order of trust.
 * Pure: unit-tested in test/extension/output/outcome.test.ts.
 */
import { basename, dirname } from 'node:path';
import {
  answerLines,
  firstLine,
  firstUserFrame,
  lastLine,
  lastWickError,
  type SourceLocation,
  type SyntaxProblem,
  syntaxProblems,
} from './parseOutput.js';

/** The master's account of a failed app (issue 18's contract; absent from older masters). */
export interface Failure {
  message: string;
  stack?: string;
  location?: SourceLocation;
  /** The task whose failures failed the job (what Debug Failed Task reruns). */
  task?: { stageId: number; partitionId: number };
}

export interface RunFacts {
  file: string;
  deployMode: 'client' | 'cluster';
  text: string;
  /** Client mode: the driver's exit code (null: a signal ended it); undefined: not known. */
  exitCode?: number | null;
  appName?: string;
  appState?: string;
  failure?: Failure;
  driverState?: string;
  driverException?: string;
  /** Whether the run never got as far as registering an app (the submit itself failed). */
  submitFailed?: boolean;
  /** Whether a stack frame's file is the user's (in the workspace, not Wick's own). */
  accept(file: string): boolean;
}

export interface Outcome {
  failed: boolean;
  /** The notification's text. */
  message: string;
  /** A run that did not fail: the last lines the application printed (its answer). */
  answer?: string[];
  /** What "Go to Source" opens. */
  location?: SourceLocation;
  /** A failed task's partition: "Debug Failed Task" stops at `location` in it. */
  task?: { stageId: number; partitionId: number };
  /** The Problems entries (Error severity). */
  problems: SyntaxProblem[];
}

const MAX_MESSAGE = 4096;

/** A `failure` from the pushed state, checked field by field (it crossed two processes). */
export function failureOf(app: unknown): Failure | undefined {
  const f = (app as { failure?: unknown } | undefined)?.failure as
    | Record<string, unknown>
    | undefined;
  if (!f || typeof f !== 'object' || typeof f.message !== 'string') return undefined;
  const out: Failure = { message: f.message.slice(0, MAX_MESSAGE) };
  if (typeof f.stack === 'string') out.stack = f.stack.slice(0, 16384);
  const l = f.location as Record<string, unknown> | undefined;
  if (
    l &&
    typeof l.file === 'string' &&
    l.file.length <= 4096 &&
    Number.isInteger(l.line) &&
    (l.line as number) >= 1 &&
    Number.isInteger(l.column)
  )
    out.location = {
      file: l.file,
      line: l.line as number,
      column: Math.max(1, l.column as number),
    };
  const t = f.task as Record<string, unknown> | undefined;
  const count = (v: unknown) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 31;
  if (t && typeof t === 'object' && count(t.stageId) && count(t.partitionId))
    out.task = { stageId: t.stageId as number, partitionId: t.partitionId as number };
  return out;
}

export function outcome(f: RunFacts): Outcome {
  const killed = f.appState === 'KILLED' || f.driverState === 'KILLED';
  const syntax = syntaxProblems(f.text, dirname(f.file));
  const exitFailed = f.exitCode !== undefined && f.exitCode !== 0;
  const failed =
    !killed &&
    (f.submitFailed === true ||
      f.appState === 'FAILED' ||
      f.failure !== undefined ||
      exitFailed ||
      f.driverState === 'FAILED' ||
      f.driverState === 'ERROR');
  const what = f.appName ?? basename(f.file);
  if (!failed) {
    const answer = answerLines(f.text);
    return {
      failed: false,
      message: killed ? `${what} was killed` : `${what} finished`,
      ...(answer.length ? { answer } : {}),
      problems: [],
    };
  }
  const syntaxLine = syntax[0]
    ? `${basename(syntax[0].file)}:${syntax[0].line}:${syntax[0].column}: ${syntax[0].message}`
    : undefined;
  const error =
    (f.failure && firstLine(f.failure.message)) ??
    (syntaxLine ? `Syntax error in ${syntaxLine}` : undefined) ??
    lastWickError(f.text) ??
    (f.driverException && firstLine(f.driverException)) ??
    lastLine(f.text) ??
    (f.exitCode === null ? 'the driver was ended by a signal' : `exit status ${f.exitCode}`);
  const message = f.submitFailed
    ? `Submitting ${basename(f.file)} failed: ${error}`
    : `${what} failed: ${error}`;
  const location =
    f.failure?.location ??
    (f.failure?.stack ? firstUserFrame(f.failure.stack, f.accept) : undefined) ??
    firstUserFrame(f.text, f.accept) ??
    syntax[0];
  const problems: SyntaxProblem[] = syntax.length
    ? syntax
    : location
      ? [{ ...location, message: error }]
      : // No line of the user's in the stack (a driver that died before it ran any, or a stack
        // that points into the bundle): the entry still names the file that failed.
        [
          {
            file: f.file,
            line: 1,
            column: 1,
            message: `${error} (no line of ${basename(f.file)} in the stack)`,
          },
        ];
  return {
    failed,
    message: message.slice(0, MAX_MESSAGE),
    ...(location ? { location } : {}),
    ...(f.failure?.task ? { task: f.failure.task } : {}),
    problems,
  };
}
