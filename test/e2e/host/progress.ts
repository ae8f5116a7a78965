import * as vscode from 'vscode';
import type { Host } from '../../../extension/host.js';

/** One progress notification the extension showed: its title, each message, and whether it ended. */
export interface ShownProgress {
  title: string;
  messages: string[];
  ended: Promise<void>;
  /** Its Cancel button, as a click on it: the task's token is cancelled. */
  cancel(): void;
  /** The first message (shown already or to come) that `pred` accepts. */
  message(pred: (m: string) => boolean): Promise<string>;
}

/**
 * Records the extension's progress notifications (through its Host seam) while they still show
 * as usual, until restore(): a submit's phases as the user reads them.
 */
export class RecordingProgress {
  readonly shown: ShownProgress[] = [];
  private readonly original: Host['withProgress'];

  constructor(private readonly host: Host) {
    this.original = host.withProgress;
    const original = this.original;
    const shown = this.shown;
    host.withProgress = <R>(
      options: vscode.ProgressOptions,
      task: Parameters<Host['withProgress']>[1],
    ) => {
      const ours = new vscode.CancellationTokenSource();
      const waiters: { pred: (m: string) => boolean; resolve: (m: string) => void }[] = [];
      const entry: ShownProgress = {
        title: options.title ?? '',
        messages: [],
        ended: Promise.resolve(),
        cancel: () => ours.cancel(),
        message: (pred) => {
          const seen = entry.messages.find(pred);
          return seen !== undefined
            ? Promise.resolve(seen)
            : new Promise((resolve) => waiters.push({ pred, resolve }));
        },
      };
      shown.push(entry);
      const result = original(options, (progress, token) => {
        token.onCancellationRequested(() => ours.cancel());
        return task(
          {
            report: (v) => {
              const m = v.message;
              if (m) {
                entry.messages.push(m);
                for (const w of waiters.filter((x) => x.pred(m))) {
                  waiters.splice(waiters.indexOf(w), 1);
                  w.resolve(m);
                }
              }
              progress.report(v);
            },
          },
          ours.token,
        );
      }) as Thenable<R>;
      entry.ended = Promise.resolve(result).then(
        () => undefined,
        () => undefined,
      );
      return result;
    };
  }

  restore(): void {
    this.host.withProgress = this.original;
  }
}
