/**
 * A failed application's error as a document: what failed (the task: its stage and partition),
 * the error, its stack (source-mapped by the driver), and the user's line as a link the editor
 * opens at that line (`file://…#L12,5`, which VS Code's link opener reads as line and column).
 * Pure: unit-tested as text.
 */
import { pathToFileURL } from 'node:url';
import type { AppFailure } from '../../backend/protocol/common.js';

export function failureText(name: string, appId: string, f: AppFailure): string {
  const lines = [`${name} (${appId}) FAILED`];
  if (f.task)
    lines.push(
      `The task of stage ${f.task.stageId}, partition ${f.task.partitionId}, kept failing (Debug Failed Task reruns it under the debugger)`,
    );
  lines.push('');
  // A stack begins with its message: the message once.
  const stack = f.stack?.trim();
  lines.push(stack?.startsWith(f.message.split('\n')[0] ?? f.message) ? stack : f.message);
  if (stack && !stack.startsWith(f.message.split('\n')[0] ?? f.message)) lines.push(stack);
  if (f.location) {
    const l = f.location;
    lines.push(
      '',
      `Your line: ${l.file}:${l.line}:${l.column}`,
      `Open it: ${pathToFileURL(l.file).href}#L${l.line},${l.column}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
