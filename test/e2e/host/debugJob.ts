/**
 * Debug on Wick: a `wick` launch runs the driver under VS Code's JavaScript debugger, which stops
 * at a breakpoint in the application's own .ts file (bound through the compiled module's source
 * map), shows the driver's values there, and goes on to a FINISHED application when continued.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { type Api, apps, figures, setting, step, until, within } from './helpers.js';

export interface Stopped {
  session: vscode.DebugSession;
  threadId: number;
  reason: string;
}

/** Hears the debug adapters' `stopped` events (the DAP traffic VS Code itself sees). */
export function stops(): {
  next: () => Promise<Stopped>;
  clear: () => void;
  dispose: () => void;
  output: string[];
} {
  const output: string[] = [];
  const queue: Stopped[] = [];
  let waiter: ((s: Stopped) => void) | undefined;
  const startSub = vscode.debug.onDidStartDebugSession((x) =>
    output.push(`[started ${x.type} ${x.name} ${JSON.stringify(x.configuration).slice(0, 600)}]`),
  );
  const stackSub = vscode.debug.onDidChangeActiveStackItem((item) => {
    if (item instanceof vscode.DebugStackFrame) {
      const st = {
        session: item.session,
        threadId: item.threadId,
        reason: 'focused',
        frameId: item.frameId,
      };
      output.push(`[focused frame ${item.frameId}]`);
      if (waiter) {
        const w = waiter;
        waiter = undefined;
        w(st);
      } else queue.push(st);
    }
  });
  const endSub = vscode.debug.onDidTerminateDebugSession((x) =>
    output.push(`[ended ${x.type} ${x.name}]`),
  );
  const reg = vscode.debug.registerDebugAdapterTrackerFactory('*', {
    createDebugAdapterTracker: (session) => ({
      onDidSendMessage: (m: {
        type?: string;
        event?: string;
        body?: { threadId: number; reason: string };
      }) => {
        // When the debuggee and its session said they ended: what "the session ends" waits on.
        if (m.type === 'event' && (m.event === 'exited' || m.event === 'terminated'))
          output.push(`[${m.event} ${session.name} at ${Date.now()}]`);
        if (process.env.WICK_E2E_DAP_LOG && m.type === 'event')
          appendFileSync(
            process.env.WICK_E2E_DAP_LOG,
            `${Date.now()} ${session.id} ${session.name} ${m.event} ${JSON.stringify(m.body ?? {}).slice(0, 300)}\n`,
          );
        if (m.type !== 'event' || m.event !== 'stopped' || !m.body) return;
        const s = { session, threadId: m.body.threadId, reason: m.body.reason };
        if (waiter) {
          const w = waiter;
          waiter = undefined;
          w(s);
        } else queue.push(s);
      },
    }),
  });
  return {
    // A stop is heard twice (the adapter's event, then VS Code focusing its frame): after a
    // continue, what was heard before is stale.
    clear: () => {
      queue.length = 0;
    },
    next: () => {
      const s = queue.shift();
      return s ? Promise.resolve(s) : new Promise((r) => (waiter = r));
    },
    dispose: () => {
      reg.dispose();
      startSub.dispose();
      stackSub.dispose();
      endSub.dispose();
    },
    output,
  };
}

export async function debugJobSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  await step(
    'Debug on Wick (wick.debug.master cluster) stops at a breakpoint in the driver, then the app FINISHES',
    async () => {
      const jsDebug = vscode.extensions.getExtension('ms-vscode.js-debug');
      assert.ok(jsDebug, "VS Code's JavaScript debugger is built in");
      await jsDebug.activate();
      const file = join(root, 'test', 'fixtures', 'apps', 'debugMe.ts');
      const line = readFileSync(file, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('BREAK HERE'));
      assert.ok(line > 0);
      const bp = new vscode.SourceBreakpoint(
        new vscode.Location(vscode.Uri.file(file), new vscode.Position(line, 0)),
      );
      vscode.debug.addBreakpoints([bp]);
      // The window's cluster: the driver stops there, and its application is the cluster's.
      const restore = await setting('debug.master', 'cluster');
      const heard = stops();
      const before = new Set(apps(s.state).map((a) => a.id));
      const ended = new Promise<number>((resolve) => {
        const sub = vscode.debug.onDidTerminateDebugSession(() => {
          if (!vscode.debug.activeDebugSession) {
            sub.dispose();
            resolve(Date.now());
          }
        });
      });
      const said = () =>
        `; the debuggee said: ${heard.output.join('').slice(-3000)}; apps: ${apps(s.state)
          .filter((a) => !before.has(a.id))
          .map((a) => `${a.name} ${a.state}`)
          .join(', ')}`;
      const req = async (st: Stopped, command: string, args: object): Promise<unknown> => {
        try {
          return await st.session.customRequest(command, args);
        } catch (err) {
          throw new Error(
            `${command} in ${st.session.name} (${st.reason}): ${(err as Error).message}${said()}`,
          );
        }
      };
      type Frame = { id: number; line: number; source?: { path?: string } };
      /** The top frame of a stop, or undefined for a stop already over (heard late). */
      const topOf = async (st: Stopped): Promise<Frame | undefined> => {
        try {
          const t = (await st.session.customRequest('stackTrace', { threadId: st.threadId })) as {
            stackFrames: Frame[];
          };
          const f = t.stackFrames[0];
          heard.output.push(`[top ${f?.source?.path}:${f?.line}]`);
          return f;
        } catch (err) {
          heard.output.push(`[stackTrace failed: ${(err as Error).message}]`);
          return undefined;
        }
      };
      // In code-server, VS Code hands the debug adapter's paths to the browser as
      // vscode-remote:// URIs: the file is the URI's path.
      const pathOf = (f: Frame | undefined) => {
        const p = f?.source?.path;
        return p?.includes('://') ? vscode.Uri.parse(p).path : p;
      };
      const atBreakpoint = (f: Frame | undefined) => pathOf(f) === file && f?.line === line + 1;
      try {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
        const started = await vscode.commands.executeCommand(
          'wick.debugJob',
          vscode.Uri.file(file),
        );
        assert.equal(started, true, 'the debug session started');
        // js-debug may stop first at its own instrumentation (a source map being read): go on
        // until it stands at the breakpoint.
        let stop = await within(90_000, heard.next(), () => `the debugger stopping${said()}`);
        let top = await topOf(stop);
        for (let i = 0; i < 20 && !atBreakpoint(top); i++) {
          if (top) {
            await req(stop, 'continue', { threadId: stop.threadId });
            heard.clear();
          }
          stop = await within(
            60_000,
            heard.next(),
            () => `the debugger stopping at the breakpoint${said()}`,
          );
          top = await topOf(stop);
        }
        assert.equal(pathOf(top), file, `stopped in the user's .ts file${said()}`);
        assert.equal(top?.line, line + 1, "at the breakpoint's line");
        // The driver's own value at that point: the sum of 2x over 1..100.
        const value = (await req(stop, 'evaluate', {
          expression: 'total',
          frameId: top?.id,
          context: 'repl',
        })) as { result: string };
        assert.equal(value.result, String(2 * 5050));
        // The user's module scope: their names and none of Wick's (the binding lookup shipped
        // functions need is registered, not declared; no require helper in a module that does
        // not name require).
        const { scopes } = (await req(stop, 'scopes', { frameId: top?.id })) as {
          scopes: { name: string; variablesReference: number }[];
        };
        const moduleScope = scopes.find((x) => /module/i.test(x.name));
        assert.ok(moduleScope, `a Module scope among ${scopes.map((x) => x.name)}`);
        const { variables } = (await req(stop, 'variables', {
          variablesReference: moduleScope.variablesReference,
        })) as { variables: { name: string }[] };
        const names = variables.map((v) => v.name);
        assert.ok(names.includes('total') && names.includes('wc'), `the user's names: ${names}`);
        assert.deepEqual(
          names.filter((n) => n.startsWith('__wick') || n === 'require'),
          [],
          `nothing of Wick's in the Module scope: ${names}`,
        );
        figures.debugModuleScopeNames = names.length;
        const app = apps(s.state).find((a) => !before.has(a.id) && a.name === 'Debug Me');
        assert.ok(app, 'the debugged driver registered its application');
        const continued = Date.now();
        if (process.env.WICK_E2E_DAP_LOG)
          appendFileSync(process.env.WICK_E2E_DAP_LOG, `${continued} continue\n`);
        await req(stop, 'continue', { threadId: stop.threadId });
        await within(
          60_000,
          until(s, (m) =>
            apps(m.state).find((a) => a.id === app.id)?.state === 'FINISHED' ? true : undefined,
          ),
          `${app.id} FINISHED after continuing`,
        );
        const finished = Date.now();
        if (process.env.WICK_E2E_DAP_LOG)
          appendFileSync(process.env.WICK_E2E_DAP_LOG, `${finished} app FINISHED seen\n`);
        const end = await within(30_000, ended, 'the debug session ending');
        // Issue 29 measured 15 s from Continue to the session's end; printed, not asserted.
        figures.debugEndAfterContinueMs = end - continued;
        figures.debugEndAfterFinishedMs = end - finished;
        for (const o of heard.output) {
          const m = /^\[(exited|terminated) .* at (\d+)\]$/.exec(o);
          if (m) figures[`debug_${m[1]}AfterContinueMs`] = Number(m[2]) - continued;
        }
      } finally {
        heard.dispose();
        await restore();
        vscode.debug.removeBreakpoints([bp]);
        if (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
      }
    },
  );
}
