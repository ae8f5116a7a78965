/**
 * The choices of a submit: asked (Submit Job…, four questions prefilled with this file's last
 * answers, else the settings), or taken without asking (Run, Submit Again). Answers are
 * remembered per file, and the last submit of the window as a whole for Submit Again.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { SubmitParams } from '../../backend/agent/protocol.js';
import { submitDefaults } from './submitSettings.js';

interface Remembered {
  args: string;
  deployMode: 'client' | 'cluster';
  executorMemory: string;
  executorCores: string;
}

const LAST = 'wick.submit:last';
const perFile = (file: string) => `wick.submit:${file}`;

/** This file's last answers, else the settings' defaults. */
function lastFor(memento: vscode.Memento, file: string): Remembered {
  const d = submitDefaults();
  return (
    memento.get<Remembered>(perFile(file)) ?? {
      args: '',
      deployMode: d.deployMode,
      executorMemory: d.executorMemory,
      executorCores: d.executorCores,
    }
  );
}

function toParams(file: string, r: Remembered): SubmitParams {
  const max = submitDefaults().maxCores;
  return {
    file,
    args: r.args.split(/\s+/).filter(Boolean),
    deployMode: r.deployMode,
    ...(r.executorMemory ? { executorMemory: r.executorMemory } : {}),
    ...(r.executorCores ? { executorCores: Number(r.executorCores) } : {}),
    ...(max ? { maxCores: max } : {}),
  };
}

async function remember(memento: vscode.Memento, params: SubmitParams): Promise<void> {
  await memento.update(LAST, params);
}

/**
 * Submit Job…: the four questions; undefined when the user cancels one. A question stays open
 * when the focus moves (a Welcome page or a notification takes it): closing would lose the
 * answers given so far.
 */
export async function askSubmit(
  memento: vscode.Memento,
  file: string,
): Promise<SubmitParams | undefined> {
  const last = lastFor(memento, file);
  const name = basename(file);
  const args = await vscode.window.showInputBox({
    ignoreFocusOut: true,
    title: `Submit ${name} (1/4): arguments`,
    value: last.args,
    prompt: 'Space-separated arguments for the application',
  });
  if (args === undefined) return undefined;
  const modes = [
    { label: 'client', description: 'the driver runs next to VS Code (in the Wick agent)' },
    { label: 'cluster', description: 'the driver runs on a worker' },
  ].sort((a) => (a.label === last.deployMode ? -1 : 1));
  const mode = await vscode.window.showQuickPick(modes, {
    ignoreFocusOut: true,
    title: `Submit ${name} (2/4): deploy mode`,
  });
  if (!mode) return undefined;
  const memory = await vscode.window.showInputBox({
    ignoreFocusOut: true,
    title: `Submit ${name} (3/4): executor memory`,
    value: last.executorMemory,
    validateInput: (v) => (/^\d+[kmgt]?$/i.test(v.trim()) ? undefined : 'e.g. 512m or 1g'),
  });
  if (memory === undefined) return undefined;
  const cores = await vscode.window.showInputBox({
    ignoreFocusOut: true,
    title: `Submit ${name} (4/4): cores per executor`,
    value: last.executorCores,
    prompt: 'Empty: all a worker offers',
    validateInput: (v) =>
      v.trim() === '' || /^\d+$/.test(v.trim()) ? undefined : 'A whole number, or empty',
  });
  if (cores === undefined) return undefined;
  const answers: Remembered = {
    args,
    deployMode: mode.label as 'client' | 'cluster',
    executorMemory: memory.trim(),
    executorCores: cores.trim(),
  };
  await memento.update(perFile(file), answers);
  const params = toParams(file, answers);
  await remember(memento, params);
  return params;
}

/** Run: this file with its last answers (else the settings), asking nothing. */
export async function runChoices(memento: vscode.Memento, file: string): Promise<SubmitParams> {
  const params = toParams(file, lastFor(memento, file));
  await remember(memento, params);
  return params;
}

/** Submit Again: the window's last submit as it was. */
export function lastSubmit(memento: vscode.Memento): SubmitParams {
  const p = memento.get<SubmitParams>(LAST);
  if (!p)
    throw new Error('Nothing was submitted in this workspace yet: run Wick: Submit Job… first');
  return p;
}

/** Presets (tests, keybindings) are remembered too, so Submit Again repeats them. */
export async function rememberPreset(memento: vscode.Memento, params: SubmitParams): Promise<void> {
  await remember(memento, params);
}
