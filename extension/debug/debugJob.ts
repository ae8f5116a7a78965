/**
 * Debug a job: a `wick` launch configuration (and Debug on Wick, beside Run) becomes a launch of
 * VS Code's own JavaScript debugger (js-debug, type `node`) on `wick submit --deploy-mode client`,
 * against the window's cluster. The driver runs inside that process (runAppHere imports the
 * compiled application), and the compiled modules carry inline source maps to the user's files,
 * so breakpoints set in the .ts file bind; `pauseForSourceMap` makes js-debug read each module's
 * map as it loads, since the compiled tree lives in a temporary folder no `outFiles` could name.
 *
 * By default (setting wick.debug.master, `local[2]`) the application runs with Spark's local[N]
 * master: its executors run inside that same process (backend/app/local/), so breakpoints in the
 * functions given to map, filter, reduceByKey… stop too (js-debug attaches to the executors'
 * task threads as it does to any worker_thread). With `cluster` it runs on the window's cluster,
 * where task functions run on executors, in other processes, and only the driver stops.
 */
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { Session } from '../session.js';
import { submitDefaults } from '../submit/submitSettings.js';

export const DEBUG_TYPE = 'wick';

export interface WickLaunch extends vscode.DebugConfiguration {
  program?: string;
  args?: string[];
  master?: string;
  executorMemory?: string;
  executorCores?: number;
}

interface Deps {
  session: Session;
  /** dist/wick.cjs of this extension: the `wick` the agent runs. */
  wick: string;
  dist: string;
}

/** The node launch that runs `wick submit` on the program under the inspector. */
export function nodeLaunch(
  c: WickLaunch,
  master: string,
  d: Omit<Deps, 'session'>,
): vscode.DebugConfiguration {
  const program = c.program as string;
  const defaults = submitDefaults();
  const memory = c.executorMemory ?? defaults.executorMemory;
  // In-process executors have one task thread each: cores per executor mean nothing there.
  const cores = master.startsWith('local[')
    ? undefined
    : (c.executorCores ?? (defaults.executorCores ? Number(defaults.executorCores) : undefined));
  return {
    type: 'node',
    request: 'launch',
    name: c.name || `Debug ${basename(program)} on Wick`,
    runtimeExecutable: process.execPath,
    program: d.wick,
    args: [
      'submit',
      '--master',
      master,
      '--deploy-mode',
      'client',
      ...(memory ? ['--executor-memory', memory] : []),
      ...(cores ? ['--executor-cores', String(cores)] : []),
      program,
      ...(c.args ?? []),
    ],
    // With a variable still in it, js-debug's default (the workspace folder) is the best guess.
    ...(program.includes('$') ? {} : { cwd: dirname(program) }),
    env: { ELECTRON_RUN_AS_NODE: '1', WICK_DIST: d.dist },
    console: 'internalConsole',
    outputCapture: 'std',
    sourceMaps: true,
    pauseForSourceMap: true,
    // js-debug reads maps only inside the workspace by default; the compiled tree is in the temp
    // folder (bundle.ts), and scanning the workspace's own .js files for maps is wasted time.
    resolveSourceMapLocations: [join(tmpdir(), '**'), '/**', '!**/node_modules/**'],
    outFiles: [
      join(tmpdir(), 'wick-submit-*', '**', '*.mjs'),
      join(tmpdir(), 'wick-submit-*', '**', '*.js'),
    ],
    // Wick's own code is not the user's: stepping goes over it.
    skipFiles: ['<node_internals>/**', `${d.dist}/**`],
  };
}

/** Setting wick.debug.master: local[N] (tasks in the debugged process) or cluster. */
export function debugMaster(): string {
  return vscode.workspace.getConfiguration('wick').get<string>('debug.master') || 'local[2]';
}

class Provider implements vscode.DebugConfigurationProvider {
  constructor(private readonly d: Deps) {}

  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's own variable, substituted by it
    return [{ type: DEBUG_TYPE, request: 'launch', name: 'Debug Wick Job', program: '${file}' }];
  }

  /**
   * Turned into a `node` launch here, before variables are substituted: VS Code resolves a
   * configuration whose type changed again with the new type's providers only at this stage, and
   * js-debug's provider is what turns `node` into the `pwa-node` its adapter serves. `${file}` in
   * `program` is substituted afterwards, inside the node launch's arguments.
   */
  async resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    c: WickLaunch,
  ): Promise<vscode.DebugConfiguration | undefined> {
    // Already turned into a node launch (another resolver of this type ran first): as it is.
    if (c.type && c.type !== DEBUG_TYPE) return c;
    // F5 with no launch.json: the active file.
    if (!c.type && !c.request && !c.name) {
      const file = vscode.window.activeTextEditor?.document.uri.fsPath;
      if (!file) return undefined;
      c = { type: DEBUG_TYPE, request: 'launch', name: `Debug ${basename(file)}`, program: file };
    }
    const program = c.program ?? '';
    if (!program.includes('$') && !/\.(m?js|cjs|ts|mts|cts)$/.test(program)) {
      void vscode.window.showErrorMessage(
        `Wick: a "wick" debug configuration needs "program": a .ts, .js or .mjs application file, got ${JSON.stringify(c.program ?? null)}`,
      );
      return undefined;
    }
    const wanted = c.master ?? debugMaster();
    const master = wanted === 'cluster' || wanted === '' ? await this.master() : wanted;
    return nodeLaunch(c, master, this.d);
  }

  /** The window's cluster, started or connected first as any submit would. */
  private async master(): Promise<string> {
    await this.d.session.ensureConnected();
    const conn = this.d.session.connection;
    if (conn.kind !== 'connected')
      throw new Error('Not connected to a master: start the local cluster or connect first');
    return conn.url;
  }
}

export function registerDebug(d: Deps): vscode.Disposable[] {
  return [
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new Provider(d)),
    // Listed in Run and Debug's picker without a launch.json; resolving stays with the one above.
    vscode.debug.registerDebugConfigurationProvider(
      DEBUG_TYPE,
      { provideDebugConfigurations: () => new Provider(d).provideDebugConfigurations() },
      vscode.DebugConfigurationProviderTriggerKind.Dynamic,
    ),
    vscode.commands.registerCommand('wick.debugJob', async (uri?: vscode.Uri) => {
      const file =
        uri instanceof vscode.Uri
          ? uri.fsPath
          : vscode.window.activeTextEditor?.document.uri.fsPath;
      if (!file) {
        void vscode.window.showErrorMessage(
          'Wick: open the application file to debug (a .ts or .js file importing "wick")',
        );
        return false;
      }
      const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(file));
      return vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE,
        request: 'launch',
        name: `Debug ${basename(file)} on Wick`,
        program: file,
      });
    }),
  ];
}
