/**
 * Spark's console progress bar on a terminal (ConsoleProgressBar.scala, wick.ui.showConsoleProgress):
 * redrawn every `updateIntervalMs` on stderr, after `\r`, for the stages that have run longer
 * than `firstDelayMs` (a short job shows nothing), and cleared when they are done.
 *
 * Unlike Spark's, it never garbles the program's own output: while a bar is drawn, the first write
 * to stdout or stderr that is not the bar's clears the line first, and the bar is drawn again at
 * the next tick, below that output; and while the program has a line open on the terminal (its
 * last write there did not end with a newline), no bar is drawn, since the bar's `\r` would write
 * over that line. Nothing is drawn when stderr is no terminal.
 */

import { renderProgressBar, type StageProgress } from '../../../shared/progressBar.js';
import { type Clock, systemClock, type TimerHandle } from '../../../util/clock.js';

export interface ActiveStage extends StageProgress {
  /** When the stage was submitted (ms, the clock's). */
  submittedAtMs: number;
}

/** The part of a process stream the bar uses: a terminal's width, and writes. */
export interface Terminal {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean;
}

export interface ConsoleProgressBarOptions {
  /** The stages running now, asked at each tick. */
  stages: () => readonly ActiveStage[];
  /** Where the bar goes (stderr). */
  err: Terminal;
  /** The program's other output stream (stdout), guarded like `err`. */
  out?: Terminal;
  clock?: Clock;
  updateIntervalMs?: number;
  firstDelayMs?: number;
}

const CR = '\r';
/** Spark redraws an unchanged bar after a minute, so that an idle ssh session stays open. */
const REDRAW_UNCHANGED_MS = 60_000;

export class ConsoleProgressBar {
  private readonly clock: Clock;
  private readonly updateIntervalMs: number;
  private readonly firstDelayMs: number;
  private timer: TimerHandle | undefined;
  /** The bar on the screen now ('' when the line is clear). */
  private drawn = '';
  private last = '';
  private lastDrawMs = 0;
  private readonly restore: (() => void)[] = [];
  /** The program's last write to the terminal left a line open (no newline at its end). */
  private lineOpen = false;

  constructor(private readonly options: ConsoleProgressBarOptions) {
    this.clock = options.clock ?? systemClock;
    this.updateIntervalMs = options.updateIntervalMs ?? 200;
    this.firstDelayMs = options.firstDelayMs ?? 500;
  }

  /** Whether a bar can show at all: stderr is a terminal. */
  get enabled(): boolean {
    return this.options.err.isTTY === true;
  }

  start(): void {
    if (!this.enabled || this.timer) return;
    for (const stream of [this.options.err, this.options.out]) if (stream) this.guard(stream);
    this.schedule();
  }

  /** Clears the bar and gives the streams back. */
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.clear();
    for (const undo of this.restore.splice(0)) undo();
  }

  /** One tick: draw the stages past their first delay, or clear when none is. */
  refresh(): void {
    const now = this.clock.now();
    const stages = this.options.stages().filter((s) => now - s.submittedAtMs >= this.firstDelayMs);
    if (stages.length === 0 || this.lineOpen) {
      this.clear();
      return;
    }
    // A terminal of no size (a pty nobody sized) has columns 0: COLUMNS, else 80, as Spark's.
    const columns = this.options.err.columns || Number(process.env.COLUMNS) || 80;
    const width = Math.max(20, columns - 1);
    const bar = renderProgressBar(stages, width);
    if (bar === this.drawn && now - this.lastDrawMs < REDRAW_UNCHANGED_MS) return;
    this.raw(
      this.options.err,
      `${CR}${bar}${' '.repeat(Math.max(0, this.last.length - bar.length))}${CR}`,
    );
    this.drawn = bar;
    this.last = bar;
    this.lastDrawMs = now;
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      this.refresh();
      if (this.timer) this.schedule();
    }, this.updateIntervalMs);
  }

  private clear(): void {
    if (!this.drawn) return;
    const blank = ' '.repeat(this.drawn.length);
    this.drawn = '';
    this.last = '';
    this.raw(this.options.err, `${CR}${blank}${CR}`);
  }

  /** Writes that are the bar's own, past the guard. */
  private raw(stream: Terminal, text: string): void {
    (this.originals.get(stream) ?? stream.write.bind(stream))(text);
  }

  private readonly originals = new Map<Terminal, (chunk: string) => boolean>();

  /** The program's writes to `stream` clear the bar first; the next tick draws it again. */
  private guard(stream: Terminal): void {
    const original = stream.write;
    const bound = original.bind(stream) as (chunk: string) => boolean;
    this.originals.set(stream, bound);
    // A stream that is no terminal (stdout into a file) moves no cursor on the screen.
    const onScreen = stream.isTTY === true;
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (this.drawn) this.clear();
      if (onScreen && chunk.length > 0) this.lineOpen = !endsWithNewline(chunk);
      return (original as (c: string | Uint8Array, ...r: unknown[]) => boolean).call(
        stream,
        chunk,
        ...rest,
      );
    }) as Terminal['write'];
    this.restore.push(() => {
      stream.write = original;
      this.originals.delete(stream);
    });
  }
}

function endsWithNewline(chunk: string | Uint8Array): boolean {
  return typeof chunk === 'string' ? chunk.endsWith('\n') : chunk[chunk.length - 1] === 0x0a;
}
