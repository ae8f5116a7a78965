/**
 * Wick: New Job and Wick: Set Up Types. New Job writes a typed example job into a folder, sets the
 * folder up for `import … from 'wick'` (projectTypes.ts) and opens it; opening any file that
 * imports 'wick' in a folder without the types offers the same set-up, once per folder.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import * as vscode from 'vscode';
import type { Host } from '../host.js';
import { jobTemplate } from './jobTemplate.js';
import { setUpProjectTypes, TYPES_DIR } from './projectTypes.js';
import { importsWick, resolvesWick } from './resolvesWick.js';

export interface ProjectDeps {
  host: Host;
  /** The extension's dist/types (scripts/build.mjs copies them there). */
  shippedTypes: string;
  memento: vscode.Memento;
}

const JOB_FILE = /^[\w][\w.-]*\.(ts|mts|js|mjs)$/;

/** The memento key of the last job New Job wrote: what Run on Wick runs with no editor active. */
export const LAST_NEW_JOB = 'wick.lastNewJob';

/** The last job New Job wrote, if it is still there. */
export function lastNewJob(memento: vscode.Memento): string | undefined {
  const file = memento.get<string>(LAST_NEW_JOB);
  return file && existsSync(file) ? file : undefined;
}

/** Wick: New Job [folder] [file name]: the file written, or undefined if the user cancelled. */
export async function newJob(
  d: ProjectDeps,
  folderArg?: vscode.Uri,
  nameArg?: string,
): Promise<vscode.Uri | undefined> {
  const folder = folderArg ?? (await pickFolder());
  if (!folder) return undefined;
  const name =
    nameArg ??
    (await vscode.window.showInputBox({
      title: 'Wick: New Job',
      // Run from the walkthrough, the step ticks as the box opens and VS Code moves the focus to
      // the next step, which would close the box before the user saw it.
      ignoreFocusOut: true,
      prompt: `A file name in ${folder.fsPath}`,
      value: freeName(folder.fsPath),
      validateInput: (v) => nameProblem(folder.fsPath, v.trim()),
    }));
  if (!name) return undefined;
  const problem = nameProblem(folder.fsPath, name);
  if (problem) throw new Error(problem);
  const file = join(folder.fsPath, name);
  const appName = basename(name, extname(name));
  await writeFile(file, jobTemplate(appName, name), { flag: 'wx' });
  await setUpProjectTypes(folder.fsPath, d.shippedTypes);
  await d.memento.update(LAST_NEW_JOB, file);
  const uri = vscode.Uri.file(file);
  await vscode.window.showTextDocument(uri);
  return uri;
}

/** Wick: Set Up Types [folder]: what was written. */
export async function setUpTypes(d: ProjectDeps, folderArg?: vscode.Uri): Promise<string[]> {
  const folder = folderArg ?? (await pickFolder());
  if (!folder) return [];
  const { written } = await setUpProjectTypes(folder.fsPath, d.shippedTypes);
  // Files already open belong to the project TypeScript made before there was a tsconfig.json:
  // it does not move them by itself.
  if (written.includes('tsconfig.json'))
    await Promise.resolve(vscode.commands.executeCommand('typescript.restartTsServer')).catch(
      () => undefined,
    );
  void d.host.showInformationMessage(
    `Wick: ${basename(folder.fsPath)} has the types for 'wick' and Node (${written.join(', ')})`,
  );
  return written;
}

/**
 * Offers the set-up when a file that imports 'wick' opens in a folder without its types, and
 * refreshes the types of a folder set up by another version of the extension.
 */
export function offerTypesOnOpen(d: ProjectDeps): vscode.Disposable {
  const asked = new Set<string>();
  const check = async (doc: vscode.TextDocument) => {
    if (doc.uri.scheme !== 'file' || !/^(type|java)script/.test(doc.languageId)) return;
    if (!importsWick(doc.getText())) return;
    const folder =
      vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? dirname(doc.uri.fsPath);
    if (resolvesWick(folder)) {
      if (outdated(folder, d.shippedTypes)) await setUpProjectTypes(folder, d.shippedTypes);
      return;
    }
    const key = `wick.types.declined:${folder}`;
    if (asked.has(folder) || d.memento.get<boolean>(key)) return;
    asked.add(folder);
    const choice = await d.host.showInformationMessage(
      `Wick: ${basename(doc.uri.fsPath)} imports 'wick', which has no types in ${basename(folder)}. Set up types for Wick and Node there (.wick/types and tsconfig.json)?`,
      'Set Up',
      'Not Now',
      "Don't Ask Again",
    );
    if (choice === 'Set Up') await setUpTypes(d, vscode.Uri.file(folder));
    if (choice === "Don't Ask Again") await d.memento.update(key, true);
  };
  for (const doc of vscode.workspace.textDocuments) void check(doc).catch(report(d));
  return vscode.workspace.onDidOpenTextDocument((doc) => void check(doc).catch(report(d)));
}

function report(d: ProjectDeps) {
  return (err: unknown) => void d.host.showErrorMessage(`Wick: ${(err as Error).message}`);
}

/** A folder set up by another build of the extension: its Wick types differ from the shipped ones. */
function outdated(folder: string, shipped: string): boolean {
  const mine = join(folder, TYPES_DIR, 'wick', 'index.d.ts');
  if (!existsSync(mine)) return false;
  return readFileSync(mine, 'utf8') !== readFileSync(join(shipped, 'wick', 'index.d.ts'), 'utf8');
}

async function pickFolder(): Promise<vscode.Uri | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 1) return folders[0]?.uri;
  if (folders.length > 1)
    return (
      await vscode.window.showWorkspaceFolderPick({
        placeHolder: 'Where the job goes',
        ignoreFocusOut: true,
      })
    )?.uri;
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    openLabel: 'Create the job here',
  });
  return picked?.[0];
}

function freeName(folder: string): string {
  for (let i = 1; ; i++) {
    const name = i === 1 ? 'job.ts' : `job-${i}.ts`;
    if (!existsSync(join(folder, name))) return name;
  }
}

function nameProblem(folder: string, name: string): string | undefined {
  if (!JOB_FILE.test(name))
    return `"${name}" is not a job file name: expected a name like job.ts (.ts, .mts, .js or .mjs), without folders`;
  if (existsSync(join(folder, name))) return `${name} already exists in ${folder}`;
  return undefined;
}

/** The project commands, and the offer on open. */
export function registerProject(d: ProjectDeps): vscode.Disposable[] {
  const cmd = (id: string, fn: (...args: never[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        report(d)(err);
        return undefined;
      }
    });
  return [
    cmd('wick.newJob', (folder?: vscode.Uri, name?: string) => newJob(d, folder, name)),
    cmd('wick.setUpTypes', (folder?: vscode.Uri) => setUpTypes(d, folder)),
    cmd('wick.gettingStarted', () =>
      vscode.commands.executeCommand(
        'workbench.action.openWalkthrough',
        'wick.wick#wick.gettingStarted',
        false,
      ),
    ),
    offerTypesOnOpen(d),
  ];
}
