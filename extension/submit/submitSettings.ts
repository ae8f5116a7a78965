/** The submit's defaults, from the user's settings (wick.submit.*), read at each submit. */
import * as vscode from 'vscode';

export interface SubmitDefaults {
  deployMode: 'client' | 'cluster';
  executorMemory: string;
  /** Empty: all the cores a worker offers (Spark's standalone default). */
  executorCores: string;
  maxCores: number | undefined;
}

export function submitDefaults(): SubmitDefaults {
  const c = vscode.workspace.getConfiguration('wick.submit');
  const cores = c.get<number | null>('executorCores', null);
  const max = c.get<number | null>('maxCores', null);
  return {
    deployMode: c.get<string>('deployMode', 'client') === 'cluster' ? 'cluster' : 'client',
    executorMemory: c.get<string>('executorMemory', '1g'),
    executorCores: cores ? String(cores) : '',
    maxCores: max ?? undefined,
  };
}
