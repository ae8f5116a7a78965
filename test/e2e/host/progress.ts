import type * as vscode from 'vscode';
import type { Host } from '../../../extension/host.js';

/** One progress notification the extension showed: its title, each message, and whether it ended. */
export interface ShownProgress {
  title: string;
  messages: string[];
  ended: Promise<void>;
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
      const entry: ShownProgress = {
        title: options.title ?? '',
        messages: [],
        ended: Promise.resolve(),
      };
      shown.push(entry);
      const result = original(options, (progress, token) =>
        task(
          {
            report: (v) => {
              if (v.message) entry.messages.push(v.message);
              progress.report(v);
            },
          },
          token,
        ),
      ) as Thenable<R>;
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
