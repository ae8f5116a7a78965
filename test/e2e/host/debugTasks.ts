/**
 * Debugging inside tasks: Debug on Wick runs the application with master local[2] (setting
 * wick.debug.master), its tasks inside the debugged process, so a breakpoint inside a `map`
 * stops there with the element's value; and Debug Failed Task, from a failed application's tree
 * item, reruns it and stops on the throwing line in the failing partition alone. Values are read
 * through the debug session's DAP (stackTrace, scopes, variables, evaluate), as VS Code's
 * Variables view reads them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { findApp, item } from '../../../extension/tree/model.js';
import { type Stopped, stops } from './debugJob.js';
import { Answering, type Api, apps, figures, step, submit, until, within } from './helpers.js';

type Frame = { id: number; line: number; source?: { path?: string } };
type Variable = { name: string; value: string };

/** The debuggee's output events (what the Debug Console shows). */
export function debuggeeOutput(): { text: string[]; dispose: () => void } {
  const text: string[] = [];
  const reg = vscode.debug.registerDebugAdapterTrackerFactory('*', {
    createDebugAdapterTracker: () => ({
      onDidSendMessage: (m: { type?: string; event?: string; body?: { output?: string } }) => {
        if (m.type === 'event' && m.event === 'output' && m.body?.output) text.push(m.body.output);
      },
    }),
  });
  return { text, dispose: () => reg.dispose() };
}

/** 1-based line of the fixture's line holding `marker`. */
export function lineOf(file: string, marker: string): number {
  const i = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(marker));
  assert.ok(i >= 0, `${marker} in ${file}`);
  return i + 1;
}

/**
 * Starts a debug session with `start`, goes on past js-debug's own stops (source maps read as
 * modules load, in the driver and in each task thread) until one stands on `file`:`line`, and
 * hands it to `check`; then removes the breakpoints, lets every stop go on, and waits for the
 * session's end.
 */
export async function stopAt(
  file: string,
  line: number,
  start: () => Thenable<unknown>,
  check: (
    st: Stopped,
    top: Frame,
    req: (c: string, a: object) => Promise<unknown>,
  ) => Promise<void>,
  /** The breakpoints to remove once stopped (read then: a command may have added them). */
  breakpoints: () => vscode.Breakpoint[],
  output: string[],
): Promise<void> {
  const heard = stops();
  const ended = new Promise<void>((resolve) => {
    const sub = vscode.debug.onDidTerminateDebugSession(() => {
      if (!vscode.debug.activeDebugSession) {
        sub.dispose();
        resolve();
      }
    });
  });
  const said = () =>
    `; events: ${heard.output.join('').slice(-2000)}; output: ${output.join('').slice(-3000)}`;
  const pathOf = (f: Frame | undefined) => {
    const p = f?.source?.path;
    return p?.includes('://') ? vscode.Uri.parse(p).path : p;
  };
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
  try {
    const started = await start();
    assert.equal(started, true, 'the debug session started');
    let stop = await within(120_000, heard.next(), () => `the debugger stopping${said()}`);
    let top = await topOf(stop);
    for (let i = 0; i < 40 && !(pathOf(top) === file && top?.line === line); i++) {
      if (top) await stop.session.customRequest('continue', { threadId: stop.threadId });
      stop = await within(90_000, heard.next(), () => `a stop at ${file}:${line}${said()}`);
      top = await topOf(stop);
    }
    assert.equal(pathOf(top), file, `stopped in the user's .ts file${said()}`);
    assert.equal(top?.line, line, `at line ${line}${said()}`);
    const st = stop;
    await check(st, top as Frame, async (c, a) => {
      try {
        return await st.session.customRequest(c, a);
      } catch (err) {
        throw new Error(`${c}: ${(err as Error).message}${said()}`);
      }
    });
    // Done: no more breakpoints, and every thread stopped (now or later) goes on to the end.
    vscode.debug.removeBreakpoints(breakpoints());
    // Stops still queued are not cleared: another task thread may stand at the breakpoint too.
    await st.session.customRequest('continue', { threadId: st.threadId });
    const continued = Date.now();
    let over = false;
    void ended.then(() => {
      over = true;
      // Issue 29 measured 15 s from Continue to the session's end; printed, not asserted.
      figures[`debugEndAfterContinueMs_${basename(file)}`] = Date.now() - continued;
    });
    while (!over) {
      const next = await within(
        120_000,
        Promise.race([ended.then(() => undefined), heard.next()]),
        () => `the session ending${said()}`,
      );
      if (next)
        await next.session
          .customRequest('continue', { threadId: next.threadId })
          .then(undefined, () => {});
    }
  } finally {
    heard.dispose();
    vscode.debug.removeBreakpoints(breakpoints());
    if (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
  }
}

/** The frame's local variables (its first scope), by name. */
/**
 * Debug Failed Task, as `start` runs it, stops at `file:line` in the failing partition (2) on
 * its failing element (x = 50), at the breakpoint the run set itself in `file`.
 */
export async function stopsAtFailingElement(
  file: string,
  line: number,
  start: () => Thenable<unknown>,
  output: string[],
): Promise<void> {
  await stopAt(
    file,
    line,
    start,
    async (_st, top, req) => {
      const locals = await localsOf(top, req);
      assert.equal(locals.get('x'), '50', `the failing element: ${[...locals]}`);
      const ctx = (await req('evaluate', {
        expression: 'wickTaskContext.partitionId',
        frameId: top.id,
        context: 'repl',
      })) as { result: string };
      assert.equal(ctx.result, '2');
    },
    () =>
      vscode.debug.breakpoints.filter(
        (b) => b instanceof vscode.SourceBreakpoint && b.location.uri.fsPath === file,
      ),
    output,
  );
}

export async function localsOf(
  top: Frame,
  req: (c: string, a: object) => Promise<unknown>,
): Promise<Map<string, string>> {
  const { scopes } = (await req('scopes', { frameId: top.id })) as {
    scopes: { name: string; variablesReference: number }[];
  };
  const local = scopes[0];
  assert.ok(local, 'the frame has scopes');
  const { variables } = (await req('variables', {
    variablesReference: local.variablesReference,
  })) as { variables: Variable[] };
  return new Map(variables.map((v) => [v.name, v.value]));
}

export async function debugTaskSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  const jsDebug = vscode.extensions.getExtension('ms-vscode.js-debug');

  await step(
    'Debug on Wick (local[2]) stops at a breakpoint inside a map, with its element',
    async () => {
      assert.ok(jsDebug, "VS Code's JavaScript debugger is built in");
      await jsDebug.activate();
      const file = join(root, 'test', 'fixtures', 'apps', 'debugTask.ts');
      const line = lineOf(file, 'BREAK IN TASK');
      const bp = new vscode.SourceBreakpoint(
        new vscode.Location(vscode.Uri.file(file), new vscode.Position(line - 1, 0)),
      );
      vscode.debug.addBreakpoints([bp]);
      const before = new Set(apps(s.state).map((a) => a.id));
      const out = debuggeeOutput();
      try {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
        await stopAt(
          file,
          line,
          () => vscode.commands.executeCommand('wick.debugJob', vscode.Uri.file(file)),
          async (_st, top, req) => {
            const locals = await localsOf(top, req);
            const x = Number(locals.get('x'));
            assert.ok([11, 12, 13, 14].includes(x), `x is an element: ${[...locals]}`);
            const ctx = (await req('evaluate', {
              expression: 'wickTaskContext.partitionId',
              frameId: top.id,
              context: 'repl',
            })) as { result: string };
            // [11, 12] is partition 0, [13, 14] partition 1.
            assert.equal(Number(ctx.result), x <= 12 ? 0 : 1, 'the task’s own partition');
          },
          () => [bp],
          out.text,
        );
        const text = out.text.join('');
        assert.match(text, /Debug task answer 22,24,26,28/);
        assert.match(text, /tasks run inside this process/);
        // local[2] uses no cluster: nothing new on the master.
        assert.deepEqual(
          apps(s.state)
            .filter((a) => !before.has(a.id))
            .map((a) => a.name),
          [],
        );
      } finally {
        out.dispose();
      }
    },
  );

  await step(
    'Debug Failed Task (tree item) stops on the throwing line in the failing partition',
    async () => {
      const file = join(root, 'test', 'fixtures', 'apps', 'failTask.ts');
      const line = lineOf(file, 'THROWS HERE');
      const errors = new Answering(api.host, 'showErrorMessage', () => undefined);
      const r = await submit({ file, deployMode: 'client' });
      const id = r.appId;
      assert.ok(id, `submitted: ${JSON.stringify(r)}`);
      const failed = await within(
        120_000,
        until(s, (m) => {
          const a = apps(m.state).find((x) => x.id === id);
          return a?.state === 'FAILED' && a.failure?.location ? a : undefined;
        }),
        () =>
          `${id} FAILED with a failure: ${JSON.stringify(apps(s.state).find((a) => a.id === id))}`,
      );
      const task = (failed.failure as { task?: { stageId: number; partitionId: number } }).task;
      assert.equal(task?.partitionId, 2, `the failure names its task: ${JSON.stringify(task)}`);
      assert.ok(Number.isInteger(task?.stageId));
      assert.equal(failed.failure?.location?.line, line);
      // The failed job's notification offers it (the next step clicks it).
      const shown = await within(
        60_000,
        errors.next((m) => m.message.includes('Fail Task failed')),
        () => `the failure's notification: ${JSON.stringify(errors.shown)}`,
      ).finally(() => errors.restore());
      assert.ok(shown.items.includes('Debug Failed Task'), JSON.stringify(shown));
      const found = findApp(id, s.model());
      assert.ok(found);
      assert.equal(item(found.node, s.model()).contextValue, 'wick.app.failed');
      const out = debuggeeOutput();
      try {
        await stopsAtFailingElement(
          file,
          line,
          // As the tree item's context menu runs it.
          () => vscode.commands.executeCommand('wick.debugFailedTask', found.node),
          out.text,
        );
        // Its breakpoint was the run's own: gone with the session.
        assert.equal(
          vscode.debug.breakpoints.filter(
            (b) => b instanceof vscode.SourceBreakpoint && b.location.uri.fsPath === file,
          ).length,
          0,
        );
      } finally {
        out.dispose();
      }
    },
  );

  await step("Debug Failed Task from the failed job's notification stops there too", async () => {
    const file = join(root, 'test', 'fixtures', 'apps', 'failTask.ts');
    const line = lineOf(file, 'THROWS HERE');
    // The user clicks the button of the job's failure notification.
    const errors = new Answering(api.host, 'showErrorMessage', (m) =>
      m.message.includes('Fail Task failed') ? 'Debug Failed Task' : undefined,
    );
    const out = debuggeeOutput();
    try {
      await stopAt(
        file,
        line,
        async () => {
          const started = new Promise<boolean>((resolve) => {
            const sub = vscode.debug.onDidStartDebugSession((x) => {
              if (!x.name.includes('failed task')) return;
              sub.dispose();
              resolve(true);
            });
          });
          const r = await submit({ file, deployMode: 'client' });
          assert.ok(r.appId, JSON.stringify(r));
          return within(
            120_000,
            started,
            () => `a Debug Failed Task session: ${JSON.stringify(errors.shown)}`,
          );
        },
        async (_st, top, req) => {
          const locals = await localsOf(top, req);
          assert.equal(locals.get('x'), '50', `the failing element: ${[...locals]}`);
        },
        () =>
          vscode.debug.breakpoints.filter(
            (b) => b instanceof vscode.SourceBreakpoint && b.location.uri.fsPath === file,
          ),
        out.text,
      );
    } finally {
      errors.restore();
      out.dispose();
    }
  });
}
