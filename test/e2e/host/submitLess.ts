/**
 * Submit with less asking: the settings' defaults, Run on Wick (no questions), Submit Again (the
 * last submit as it was), the resource check before a submit no worker could run, and the
 * notification for an app that waits for good, naming the VS Code setting to change.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Answering, type Api, apps, setting, step, submit, until, within } from './helpers.js';

type Result = { appId?: string; success: boolean; message: string } | undefined;

export async function submitLessSteps(api: Api, root: string): Promise<void> {
  const s = api.session;
  // The command answers once the driver names its app, which the cluster's state pushed to this
  // window may not hold yet.
  const shown = (appId: string) =>
    within(
      30_000,
      until(s, (m) => apps(m.state).find((a) => a.id === appId)),
      `${appId} in the cluster's state`,
    );
  const finished = (appId: string) =>
    within(
      90_000,
      until(s, (m) =>
        apps(m.state).find((a) => a.id === appId)?.state === 'FINISHED' ? true : undefined,
      ),
      `${appId} FINISHED`,
    );
  // A file no earlier step submitted: it has no remembered choices, so the settings apply.
  const dir = mkdtempSync(join(tmpdir(), 'wick-e2e-run-'));
  const pi = join(root, 'examples', 'pi.ts');
  const fresh = join(dir, 'pi.ts');
  copyFileSync(pi, fresh);

  await step(
    'Run on Wick submits with the settings, asking nothing; Submit Again repeats it',
    async () => {
      const restore = [
        await setting('submit.executorMemory', '600m'),
        await setting('submit.executorCores', 1),
      ];
      try {
        // Questions would block the command: it resolving at all says none was asked.
        const r = (await within(
          60_000,
          Promise.resolve(vscode.commands.executeCommand('wick.runFile', vscode.Uri.file(pi))),
          'Run on Wick',
        )) as Result;
        assert.ok(r?.success && r.appId, `ran: ${JSON.stringify(r)}`);
        await finished(r.appId);
        // pi.ts was submitted by earlier steps with presets: Run takes the settings only for a file
        // with no choices of its own, so the fresh copy is the one that shows them.
        const f = (await within(
          60_000,
          Promise.resolve(vscode.commands.executeCommand('wick.runFile', vscode.Uri.file(fresh))),
          'Run on Wick (fresh file)',
        )) as Result;
        assert.ok(f?.success && f.appId, `ran: ${JSON.stringify(f)}`);
        const app = await shown(f.appId);
        assert.equal(
          app?.memoryPerExecutorMB,
          600,
          'wick.submit.executorMemory is the memory asked',
        );
        assert.equal(app?.coresPerExecutor, 1, 'wick.submit.executorCores is the cores asked');
        await finished(f.appId);
        const again = (await within(
          60_000,
          Promise.resolve(vscode.commands.executeCommand('wick.submitAgain')),
          'Submit Again',
        )) as Result;
        assert.ok(again?.success && again.appId, `again: ${JSON.stringify(again)}`);
        assert.notEqual(again.appId, f.appId);
        const twin = await shown(again.appId);
        assert.equal(twin?.name, app?.name);
        assert.equal(twin?.memoryPerExecutorMB, 600);
        await finished(again.appId);
      } finally {
        for (const r of restore) await r();
      }
    },
  );

  await step(
    '500g: the resource check asks first; submitted anyway, a notification says why it waits',
    async () => {
      let answer: string | undefined;
      const warn = new Answering(api.host, 'showWarningMessage', (w) =>
        w.modal ? answer : undefined,
      );
      try {
        answer = undefined; // Cancel: nothing is submitted.
        const before = apps(s.state).length;
        const cancelled = await submit({
          file: pi,
          args: ['2'],
          deployMode: 'client',
          executorMemory: '500g',
        });
        assert.equal(cancelled, undefined, 'cancelled at the resource check');
        const check = await warn.next((w) => w.modal);
        assert.match(check.message, /^500g is more than the largest worker's 2 GiB/);
        // The default (first) button is the safe one; submitting anyway is the second.
        assert.deepEqual(check.items, ['Change Settings', 'Submit Anyway']);
        assert.equal(apps(s.state).length, before, 'no application registered');

        answer = 'Submit Anyway';
        const r = (await submit({
          file: pi,
          args: ['2'],
          deployMode: 'client',
          executorMemory: '500g',
        })) as Result;
        assert.ok(r?.success && r.appId, `submitted anyway: ${JSON.stringify(r)}`);
        const news = await within(
          30_000,
          warn.next((w) => !w.modal && w.message.includes(r.appId as string)),
          'the WAITING notification',
        );
        assert.match(
          news.message,
          /is WAITING: each executor asks for 512000 MiB but the largest worker has 2048 MiB/,
        );
        assert.match(news.message, /wick\.submit\.executorMemory/);
        assert.doesNotMatch(news.message, /wick\.executor\.memory/);
        assert.deepEqual(news.items, ['Open Settings', 'Kill']);
        const row = await until(s, (m) => {
          const a = apps(m.state).find((x) => x.id === r.appId);
          return a?.state === 'WAITING' ? a : undefined;
        });
        assert.ok(row);
        const killed = (await vscode.commands.executeCommand('wick.killApplication', {
          kind: 'app',
          app: { id: r.appId },
        })) as { success: boolean }[];
        assert.ok(killed[0]?.success);
        await within(
          30_000,
          until(s, (m) =>
            apps(m.state).find((x) => x.id === r.appId)?.state === 'KILLED' ? true : undefined,
          ),
          'the waiting app KILLED',
        );
      } finally {
        warn.restore();
      }
    },
  );
}
